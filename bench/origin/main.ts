/**
 * The bench origin in a process of its own, so that the load generator and
 * the origin do not share one event loop. Prints its URL as one JSON line.
 */
import { startBenchOrigin } from "./server";

const origin = await startBenchOrigin();
process.stdout.write(`${JSON.stringify({ url: origin.url.href })}\n`);
process.on("SIGTERM", () => {
  origin.close();
  process.exit(0);
});
