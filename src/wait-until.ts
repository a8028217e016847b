/**
 * How long the runtime lets a request's work go on once its response is sent
 * or its client left (`waitUntil`): 30 s, then it stops that work, and a
 * stopped task never runs its `finally`. A mark of work under way that such a
 * task clears (toolmap/map-store.ts, a write of the map; auth/grant-refresh.ts,
 * a request in a grant's refresh line) is taken for stopped past it.
 */
export const WAIT_UNTIL_MS = 30_000;
