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
     * entries beside the map in step with it (`SharedBoundedMap`).
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

/**
 * A `BoundedMap` whose entries each come from a source (callers.ts
 * `Caller.source`: one token, whatever sessions and queries it is sent with),
 * or from none: one source holds at most `share` of its `capacity`, and past
 * it its own entry set longest ago goes, not another source's. Entries of no
 * source share the whole capacity, as in a `BoundedMap`; `weights` bound the
 * entries together, whatever their source, as a `BoundedMap`'s do. Its index of each
 * source's entries holds no more than the map: it is told of each that leaves.
 */
export class SharedBoundedMap<K, V> {
  private readonly entries: BoundedMap<K, { value: V; source: string | undefined }>;
  /** Each source's keys, set longest ago first. */
  private readonly bySource = new Map<string, Set<K>>();

  constructor(
    capacity: number,
    readonly share: number,
    ttlMs?: number,
    private readonly weights?: WeightBound<K, V>,
  ) {
    const weighed: WeightBound<K, { value: V; source: string | undefined }> | undefined =
      weights && {
        max: weights.max,
        weigh: ({ value }, key) => weights.weigh(value, key),
      };
    this.entries = new BoundedMap(capacity, ttlMs, weighed, (key, { source }) => {
      if (source === undefined) return;
      const own = this.bySource.get(source);
      own?.delete(key);
      if (own?.size === 0) this.bySource.delete(source);
    });
  }

  get(key: K): V | undefined {
    return this.entries.get(key)?.value;
  }

  set(key: K, value: V, source: string | undefined): void {
    this.entries.delete(key);
    // One the map would not keep is in no source's index either.
    if (this.weights && this.weights.weigh(value, key) > this.weights.max) return;
    const own = source === undefined ? undefined : this.bySource.get(source);
    for (const oldest of own ?? []) {
      if ((own?.size ?? 0) < this.share) break;
      this.entries.delete(oldest);
    }
    this.entries.set(key, { value, source });
    if (source === undefined) return;
    const keys = this.bySource.get(source) ?? new Set<K>();
    keys.add(key);
    this.bySource.set(source, keys);
  }

  /** As `BoundedMap.replace`: another value for an entry (weighed again), its source and expiry kept. */
  replace(key: K, value: V): boolean {
    const held = this.entries.get(key);
    return held !== undefined && this.entries.replace(key, { value, source: held.source });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
