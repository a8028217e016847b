/**
 * Whatever a client sends, the proxy answers it or hands it to the origin:
 * never its own 500 (`Internal error in the proxy`, logged `internal_error`).
 * Random bodies, batches, tool calls, paths and headers against the demo
 * origin, through a session and without one.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { demoSession } from "../helpers/demo";
import { DEMO_NAMES } from "../helpers/demo-names";
import { captureLogs } from "../helpers/logs";
import { ACCEPT_BOTH, PROTOCOL_VERSION } from "../helpers/mcp";
import { PROXY_URL } from "../helpers/proxy";

afterEach(() => {
  vi.restoreAllMocks();
});

const METHODS = ["tools/list", "tools/call", "ping", "resources/list", "x/unknown"];
const names = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(...Object.keys(DEMO_NAMES), ...Object.values(DEMO_NAMES)),
  },
  fc.constantFrom("search_tools", "call_tool", "__proto__", ""),
  fc.string({ maxLength: 80 }),
);
const id = fc.oneof(
  { weight: 10, arbitrary: fc.integer() },
  fc.string({ maxLength: 8 }),
  fc.jsonValue(),
);
/** Arguments as models write them wrong: aliases, text for numbers, JSON in strings, odd shapes. */
const argumentsOf = fc.oneof(
  fc.dictionary(
    fc.oneof(
      fc.constantFrom("path", "payload-json", "payload_json", "count", "city", "units", "text"),
      fc.string({ maxLength: 12 }),
    ),
    fc.oneof(
      fc.jsonValue(),
      fc.jsonValue().map((value) => JSON.stringify(value)),
      fc.constantFrom("3", "true", "null", "{"),
    ),
  ),
  fc.jsonValue(),
);
const call = fc.record(
  {
    jsonrpc: fc.constant("2.0"),
    id,
    method: fc.constant("tools/call"),
    params: fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record(
          { name: names, arguments: argumentsOf, _meta: fc.jsonValue() },
          { requiredKeys: ["name"] },
        ),
      },
      fc.jsonValue(),
    ),
  },
  { requiredKeys: ["jsonrpc", "id", "method"] },
);
const other = fc.record(
  {
    jsonrpc: fc.constant("2.0"),
    id,
    method: fc.constantFrom(...METHODS),
    params: fc.oneof(
      fc.record({ cursor: fc.jsonValue(), _meta: fc.jsonValue() }, { requiredKeys: [] }),
      fc.jsonValue(),
    ),
  },
  { requiredKeys: ["jsonrpc", "method"] },
);
const message = fc.oneof(
  { weight: 10, arbitrary: call },
  { weight: 4, arbitrary: other },
  fc.jsonValue(),
);
const body = fc.oneof(
  { weight: 12, arbitrary: message.map((value) => JSON.stringify(value)) },
  {
    weight: 2,
    arbitrary: fc.array(message, { maxLength: 4 }).map((batch) => JSON.stringify(batch)),
  },
  fc.string({ maxLength: 40 }),
);
const path = fc.constantFrom(
  "/mcp",
  "/mcp",
  "/mcp",
  "/mcp/gemini",
  "/mcp/openai-strict",
  "/mcp/portable",
  "/%6dcp",
);
const version = fc.constantFrom(
  PROTOCOL_VERSION,
  PROTOCOL_VERSION,
  "2026-07-28",
  "2025-03-26",
  "garbage",
  undefined,
);

describe("a request the client got wrong", () => {
  it("is answered by the proxy or the origin, never with the proxy's own 500", async () => {
    const setup = await demoSession({ app: createApp() });
    await fc.assert(
      fc.asyncProperty(
        body,
        path,
        version,
        fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, fc.constant(false)),
        fc.constantFrom("application/json", "application/json", "application/json; charset=utf-8"),
        async (text, at, revision, inSession, contentType) => {
          const headers: Record<string, string> = {
            "content-type": contentType,
            accept: ACCEPT_BOTH,
            ...(inSession ? setup.session : {}),
            ...(revision === undefined ? {} : { "mcp-protocol-version": revision }),
          };
          const url = new URL(PROXY_URL);
          url.pathname = at;
          const logs = captureLogs();
          const response = await setup.proxy(url.href, { method: "POST", headers, body: text });
          const answer = await response.text();
          expect(answer).not.toContain("Internal error in the proxy");
          expect(logs.events("internal_error")).toEqual([]);
        },
      ),
      { numRuns: 200 },
    );
  }, 60_000);
});
