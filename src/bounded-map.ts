/**
 * A bound on what entries weigh together (`weigh` of each entry), beside the
 * bound on their number. Where a key is text an origin or client chose (a
 * tool's name), it weighs too: a long one costs what it holds.
 */
export interface WeightBound<K, V> {
  max: number;
  weigh: (value: V, key: K) => number;
}

/**
 * A map that holds at most `capacity` entries, each for at most `ttlMs` when
 * one is given, weighing at most `weights.max` together when that is given:
 * the one shape of every isolate memory (what the isolate keeps between
 * requests, app.ts `IsolateState`). The least recently used entry goes
 * first; an expired one is a miss; one heavier than the bound is not kept.
 */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, { value: V; expires: number; weight: number }>();
  private weight = 0;

  constructor(
    readonly capacity: number,
    private readonly ttlMs = Number.POSITIVE_INFINITY,
    private readonly weights?: WeightBound<K, V>,
    /**
     * Told of each entry that leaves, however it does (deleted, set again,
     * pushed out, found expired, cleared): what keeps an index of the
     * entries beside the map in step with it (caller-listings.ts).
     */
    private readonly dropped?: (key: K, value: V) => void,
  ) {}

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    if (entry.expires <= Date.now()) {
      this.weight -= entry.weight;
      this.dropped?.(key, entry.value);
      return undefined;
    }
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: K, value: V): void {
    this.delete(key);
    const weight = this.weights?.weigh(value, key) ?? 0;
    const max = this.weights?.max ?? Number.POSITIVE_INFINITY;
    if (weight > max) return;
    for (const oldest of this.entries.keys()) {
      if (this.entries.size < this.capacity && this.weight + weight <= max) break;
      this.delete(oldest);
    }
    this.entries.set(key, { value, expires: Date.now() + this.ttlMs, weight });
    this.weight += weight;
  }

  /**
   * Gives an entry another value, its expiry and place kept: `false`, and
   * nothing changed, when there is none or the new value's weight would not
   * fit beside the others'.
   */
  replace(key: K, value: V): boolean {
    const entry = this.entries.get(key);
    if (entry === undefined || entry.expires <= Date.now()) return false;
    const weight = this.weights?.weigh(value, key) ?? 0;
    const max = this.weights?.max ?? Number.POSITIVE_INFINITY;
    if (this.weight - entry.weight + weight > max) return false;
    this.weight += weight - entry.weight;
    entry.value = value;
    entry.weight = weight;
    return true;
  }

  delete(key: K): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.weight -= entry.weight;
    this.dropped?.(key, entry.value);
  }

  /** The keys, least recently used first (expired ones among them until they are read). */
  keys(): IterableIterator<K> {
    return this.entries.keys();
  }

  clear(): void {
    const entries = [...this.entries];
    this.entries.clear();
    this.weight = 0;
    for (const [key, { value }] of entries) this.dropped?.(key, value);
  }

  get size(): number {
    return this.entries.size;
  }
}
