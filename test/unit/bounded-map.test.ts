/**
 * The one shape of isolate memory (src/bounded-map.ts): bounded in entries,
 * in time, and, where entries differ in size, in their weights together.
 */
import { describe, expect, it } from "vitest";
import { BoundedMap, SharedBoundedMap } from "../../src/bounded-map";

const keys = <V>(map: BoundedMap<string, V>, candidates: string[]) =>
  candidates.filter((key) => map.get(key) !== undefined);

describe("a bounded map", () => {
  it("drops the least recently used entry past its capacity", () => {
    const map = new BoundedMap<string, number>(2);
    map.set("a", 1);
    map.set("b", 2);
    map.get("a");
    map.set("c", 3);
    expect(keys(map, ["a", "b", "c"])).toEqual(["a", "c"]);
  });

  it("with a weight bound, drops the least recently used entries until the new one fits, and keeps none heavier than the bound", () => {
    const map = new BoundedMap<string, string>(10, Number.POSITIVE_INFINITY, {
      max: 10,
      weigh: (value) => value.length,
    });
    map.set("a", "aaaa");
    map.set("b", "bbbb");
    map.get("a");
    map.set("c", "cccc");
    expect(keys(map, ["a", "b", "c"])).toEqual(["a", "c"]);
    map.set("c", "cc");
    map.set("d", "dddd");
    expect(keys(map, ["a", "c", "d"])).toEqual(["a", "c", "d"]);
    map.set("e", "e".repeat(11));
    expect(map.get("e")).toBeUndefined();
    expect(map.size).toBe(3);
    map.set("a", "a".repeat(11));
    expect(keys(map, ["a", "c", "d"])).toEqual(["c", "d"]);
  });

  it("weighs a key where the bound says so: a long name costs what it holds", () => {
    const map = new BoundedMap<string, true>(10, Number.POSITIVE_INFINITY, {
      max: 10,
      weigh: (_, key) => key.length,
    });
    for (const key of ["a", "b", "c"]) map.set(key, true);
    map.set("x".repeat(8), true);
    expect(keys(map, ["a", "b", "c", "x".repeat(8)])).toEqual(["b", "c", "x".repeat(8)]);
    expect([...map.keys()]).toEqual(["b", "c", "x".repeat(8)]);
    map.clear();
    map.set("y".repeat(10), true);
    expect(map.size).toBe(1);
  });

  it("replaces an entry's value, its expiry kept, only where the new weight fits beside the rest", () => {
    const map = new BoundedMap<string, string>(10, 60_000, {
      max: 10,
      weigh: (value) => value.length,
    });
    map.set("a", "aaaa");
    map.set("b", "bbbb");
    expect(map.replace("a", "aaaaaa")).toBe(true);
    expect(map.get("a")).toBe("aaaaaa");
    expect(map.replace("a", "aaaaaaa")).toBe(false);
    expect(keys(map, ["a", "b"])).toEqual(["a", "b"]);
    expect(map.get("a")).toBe("aaaaaa");
    expect(map.replace("c", "c")).toBe(false);
    expect(map.get("c")).toBeUndefined();
  });

  it("tells of each entry that leaves, however it leaves, and of no other", () => {
    const dropped: string[] = [];
    const map = new BoundedMap<string, number>(
      2,
      Number.POSITIVE_INFINITY,
      undefined,
      (key, value) => dropped.push(`${key}=${value}`),
    );
    map.set("a", 1);
    map.set("b", 2);
    map.set("a", 3);
    map.set("c", 4);
    map.delete("a");
    map.delete("a");
    map.clear();
    expect(dropped).toEqual(["a=1", "b=2", "a=3", "c=4"]);
    const expiring = new BoundedMap<string, number>(2, 0, undefined, (key) => dropped.push(key));
    expiring.set("x", 1);
    expect(expiring.get("x")).toBeUndefined();
    expect(dropped.at(-1)).toBe("x");
  });
});

describe("a bounded map shared by sources", () => {
  const held = (map: SharedBoundedMap<string, number>, candidates: string[]) =>
    candidates.filter((key) => map.get(key) !== undefined);

  it("lets a source past its share drop its own entry set longest ago, not another source's", () => {
    const map = new SharedBoundedMap<string, number>(8, 2);
    map.set("alice", 0, "a");
    for (let i = 0; i < 10; i++) map.set(`m${i}`, i, "m");
    expect(held(map, ["alice", "m7", "m8", "m9"])).toEqual(["alice", "m8", "m9"]);
    expect(map.size).toBe(3);
    // Set again, an entry is its source's latest, and takes no other's room.
    map.set("m8", 8, "m");
    map.set("m10", 10, "m");
    expect(held(map, ["alice", "m8", "m9", "m10"])).toEqual(["alice", "m8", "m10"]);
  });

  it("counts what the map let go (pushed out, deleted) as no longer its source's", () => {
    const map = new SharedBoundedMap<string, number>(3, 2);
    map.set("m1", 1, "m");
    map.set("m2", 2, "m");
    map.delete("m1");
    map.set("m3", 3, "m");
    expect(held(map, ["m2", "m3"])).toEqual(["m2", "m3"]);
    // Entries of no source fill the whole map, pushing out the least recently used.
    for (let i = 0; i < 3; i++) map.set(`x${i}`, i, undefined);
    expect(held(map, ["m2", "m3", "x0", "x1", "x2"])).toEqual(["x0", "x1", "x2"]);
    // Pushed out, m's are no longer counted: two of its own fit again beside one of no source.
    map.set("m4", 4, "m");
    map.set("m5", 5, "m");
    expect(held(map, ["m4", "m5", "x2"])).toEqual(["m4", "m5", "x2"]);
  });
});
