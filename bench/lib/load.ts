/** Load with autocannon: one POST body, again and again, to one URL and session. */
import autocannon from "autocannon";
import { MCP_HEADERS } from "./mcp-session";
import { percentile } from "./stats";

export interface Run {
  /** Answered requests (2xx). */
  count: number;
  rps: number;
  p50: number;
  p99: number;
  failed: number;
}

/**
 * One autocannon run, for `seconds` or for `amount` requests; latencies are
 * taken from each response, as autocannon's own histogram keeps whole ms only.
 */
export function load(
  url: URL,
  sessionId: string,
  body: string,
  connections: number,
  limit: { seconds: number } | { amount: number },
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const latencies: number[] = [];
    const started = performance.now();
    const instance = autocannon(
      {
        url: url.href,
        method: "POST",
        headers: { ...MCP_HEADERS, "mcp-session-id": sessionId },
        body,
        idReplacement: true,
        connections,
        ...("amount" in limit ? { amount: limit.amount } : { duration: limit.seconds }),
      },
      (error, result) => {
        if (error) return reject(error);
        const elapsed = (performance.now() - started) / 1000;
        latencies.sort((a, b) => a - b);
        resolve({
          count: latencies.length,
          rps: latencies.length / elapsed,
          p50: percentile(latencies, 50),
          p99: percentile(latencies, 99),
          failed: result.errors + result.timeouts + result.non2xx,
        });
      },
    );
    instance.on("response", (_client, status, _bytes, ms) => {
      if (status < 300) latencies.push(ms);
    });
  });
}
