/**
 * A map that holds at most `capacity` entries, each for at most `ttlMs` when
 * one is given: the one shape of every isolate memory (what the isolate keeps
 * between requests, app.ts `IsolateState`). The least recently used entry
 * goes first; an expired one is a miss.
 */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, { value: V; expires: number }>();

  constructor(
    readonly capacity: number,
    private readonly ttlMs = Number.POSITIVE_INFINITY,
  ) {}

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    if (entry.expires <= Date.now()) return undefined;
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expires: Date.now() + this.ttlMs });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
