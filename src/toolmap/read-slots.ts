/**
 * How many requests of an isolate read one large value of KV at once (the
 * origin's tool map, a remembered answer): each request reads for itself, as
 * it never waits for another's read (a read whose request was cancelled never
 * settles; ARCHITECTURE.md, "Platform limits, where they bite"), and each read
 * holds the value's text and what it decodes to, megabytes for a large
 * origin. A burst of requests to a cold isolate would hold as many copies;
 * past `max` reads under way, a request waits, on its own timer, for one of
 * them to be done, or for one to lapse.
 */

/**
 * Reads of one value at once: two, so that a read whose request was cancelled leaves room for
 * another at once, and a burst of requests holds two copies, not one per request.
 */
export const MAX_LARGE_READS = 2;
/** A read under way longer than this is taken for stopped: its request was cancelled. */
export const READ_LAPSE_MS = 10_000;
/** How often a request waiting for a read looks again. */
const LOOK_MS = 5;

export class ReadSlots {
  /** When each read under way began. */
  readonly #under = new Set<{ at: number }>();

  constructor(private readonly max: number) {}

  /**
   * `read()`'s value, read when fewer than `max` reads are under way; `undefined`
   * when `done()` first says a read of another request came to an end.
   */
  async read<T>(done: () => boolean, read: () => Promise<T>): Promise<T | undefined> {
    // Bounded by time: at most until the reads under way lapse, `READ_LAPSE_MS` / `LOOK_MS` looks.
    while (!done()) {
      const now = Date.now();
      for (const slot of this.#under) if (now - slot.at >= READ_LAPSE_MS) this.#under.delete(slot);
      if (this.#under.size < this.max) {
        const slot = { at: now };
        this.#under.add(slot);
        try {
          return await read();
        } finally {
          this.#under.delete(slot);
        }
      }
      await new Promise((looked) => setTimeout(looked, LOOK_MS));
    }
    return undefined;
  }
}
