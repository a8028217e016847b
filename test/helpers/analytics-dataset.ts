/**
 * Call analytics as a test in workerd reads it (docs/observability.md): a
 * `CALLS` dataset that keeps what the proxy writes, read back by the
 * documented names of the data point's fields (src/analytics/layout.ts).
 */
import { waitOnExecutionContext } from "cloudflare:test";
import { expect } from "vitest";
import { BLOBS, type BlobName, DOUBLES, type DoubleName } from "../../src/analytics/layout";

/** The tenant the tests' proxies are, by its wrangler environment. */
export const TENANT = "analytics-tests";

export interface Point {
  index: string;
  blobs: Record<BlobName, string>;
  doubles: Record<DoubleName, number>;
}

/**
 * A dataset that keeps what is written to it, read back by the documented
 * names once every request's work after its answer (`ctx.waitUntil`) is
 * done: where the proxy reads a copy of an answer, its point is written
 * from there. Its requests' contexts go in `contexts`.
 */
export function recordingDataset() {
  const written: AnalyticsEngineDataPoint[] = [];
  const contexts: ExecutionContext[] = [];
  const dataset: AnalyticsEngineDataset = {
    writeDataPoint: (point) => {
      if (point) written.push(point);
    },
  };
  const points = async (): Promise<Point[]> => {
    await Promise.all(contexts.splice(0).map((ctx) => waitOnExecutionContext(ctx)));
    return written.map((point) => {
      // The layout, position by position: one index, every blob and double, in order.
      expect(point.indexes).toHaveLength(1);
      expect(point.blobs).toHaveLength(BLOBS.length);
      expect(point.doubles).toHaveLength(DOUBLES.length);
      for (const blob of point.blobs ?? []) expect(typeof blob).toBe("string");
      for (const double of point.doubles ?? []) expect(Number.isFinite(double)).toBe(true);
      return {
        index: point.indexes?.[0] as string,
        blobs: Object.fromEntries(
          BLOBS.map((name, i) => [name, point.blobs?.[i]]),
        ) as Point["blobs"],
        doubles: Object.fromEntries(
          DOUBLES.map((name, i) => [name, point.doubles?.[i]]),
        ) as Point["doubles"],
      };
    });
  };
  // Every answer read, so that each call's outcome is the one its answer says (the default reads a sample);
  // the tenant's name, which CALLS needs beside it: the points' index.
  const bindings = { CALLS: dataset, CALLS_ANSWER_SAMPLING_RATE: "1", WRANGLER_ENV: TENANT };
  return { dataset, bindings, contexts, points, clear: () => written.splice(0) };
}

/** The two ways an origin answers a POST: an event stream, a JSON body (the demo's `&json`). */
export const CARRIED = [
  ["an event stream", ""],
  ["a JSON body", "&json"],
] as const;

export const onlyPoint = (points: Point[]) => {
  expect(points).toHaveLength(1);
  return points[0] as Point;
};
