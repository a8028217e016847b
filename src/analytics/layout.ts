/**
 * The layout of a call's data point: the storage schema operators query by
 * position (`index1`, `blob1`…, `double1`…), documented in
 * docs/observability.md, whose tables a test holds to these lists. A field
 * keeps its position for ever: a new one goes last, and one no longer
 * written stays empty. Pure, for the Worker and for `npm run stats` alike.
 */

/** The blobs, in order: `blob1` is the first. */
export const BLOBS = [
  "mcp.method.name",
  "gen_ai.tool.name",
  "outcome",
  "error.type",
  "profile",
  "mcp.client.name",
  "mcp.client.version",
  "repairs",
  "validation",
  "resolution",
  "search",
  "refusal",
  "mcp.protocol.version",
  "client.source",
  "request.id",
] as const;

/** The doubles, in order: `double1` is the first. */
export const DOUBLES = [
  "duration.ms",
  "origin.duration.ms",
  "request.bytes",
  "answer.bytes",
  "repairs.count",
  "tools.count",
  "outcome.weight",
  "task.duration.ms",
] as const;

/**
 * The requests of a task whose answer may be its end (2025-11-25's tasks,
 * 2026-07-28's tasks extension): the `mcp.method.name` of a task's end, its
 * `gen_ai.tool.name` the tool whose call created the task.
 */
export const TASK_REQUESTS = ["tasks/get", "tasks/result", "tasks/cancel"] as const;

export type BlobName = (typeof BLOBS)[number];
export type DoubleName = (typeof DOUBLES)[number];

/** A field's column in SQL: `blob2` for `gen_ai.tool.name`. */
export const blob = (name: BlobName) => `blob${BLOBS.indexOf(name) + 1}`;
export const double = (name: DoubleName) => `double${DOUBLES.indexOf(name) + 1}`;

/** Analytics Engine's bound on an index. */
const MAX_INDEX_BYTES = 96;

/**
 * The index: the tenant's wrangler environment (`WRANGLER_ENV`, at most 63
 * ASCII characters), what a query by tenant filters on and what Analytics
 * Engine samples by. Not the origin's: tenants in front of one hosted origin
 * are told apart only by ORIGIN_URL's path or query, which may hold a key.
 */
export function tenantIndex(environment: string): string {
  return environment.slice(0, MAX_INDEX_BYTES);
}

/**
 * The index of points written before the tenant's (docs/observability.md,
 * "The index"): the origin's host (and port), its first 96 characters (a
 * host is ASCII in a URL). Every tenant in front of that host wrote it.
 */
export function hostIndex(originUrl: URL): string {
  return originUrl.host.slice(0, MAX_INDEX_BYTES);
}
