/**
 * At most `max` of something in any `ms`, counted by one isolate: what a
 * client can make more of by making up callers (a cookie, a query parameter
 * the origin sees) and the isolate must not do once per caller (the listings
 * the proxy asks for itself, new callers' records written to KV).
 */
export class RateWindow {
  /** When each of the last ones was taken, oldest first: at most `max`. */
  private readonly taken: number[] = [];

  constructor(
    readonly max: number,
    private readonly ms: number,
  ) {}

  /** Whether one more may be taken now; counted when it may. */
  take(now = Date.now()): boolean {
    if (!this.free(now)) return false;
    this.taken.push(now);
    return true;
  }

  /** Whether one more may be taken now, not counted: where another window must let it too. */
  free(now = Date.now()): boolean {
    while ((this.taken[0] ?? now) <= now - this.ms) this.taken.shift();
    return this.taken.length < this.max;
  }
}
