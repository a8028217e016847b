/**
 * What an isolate keeps of the tool map in memory, and what it lets go:
 * docs/tool-map.md's "at most 16 origins and 10,000 tools each".
 */
import { describe, expect, it } from "vitest";
import { MAX_TOOLS, ToolMapMemory } from "../../src/toolmap/tool-map";

const entry = (original: string) => ({ original, schemaHash: "h" });

describe("the isolate's memory of the tool map", () => {
  it("keeps 16 origins and lets the least recently used go for a 17th", () => {
    const memory = new ToolMapMemory();
    for (let i = 0; i < 16; i++) memory.origin(`o${i}`).remember(entry(`tool of o${i}`));
    memory.origin("o0"); // used again: o1 is now the least recently used
    memory.origin("o16").remember(entry("tool of o16"));

    expect(memory.origin("o0").tools.has("tool of o0")).toBe(true);
    expect(memory.origin("o16").tools.has("tool of o16")).toBe(true);
    for (let i = 15; i >= 2; i--) {
      expect(memory.origin(`o${i}`).tools.has(`tool of o${i}`)).toBe(true);
    }
    expect(memory.origin("o1").tools.size).toBe(0);
  });

  it("holds 10,000 tools of an origin, and forgets the origin for the 10,001st", () => {
    const origin = new ToolMapMemory().origin("o");
    origin.loaded = Promise.resolve(true);
    for (let i = 0; i < MAX_TOOLS; i++) origin.remember(entry(`t${i}`), 1);
    expect(origin.tools.size).toBe(MAX_TOOLS);

    // A known tool is replaced in place, at the bound too.
    origin.remember(entry("t0"), 1);
    expect(origin.tools.size).toBe(MAX_TOOLS);

    // A new one clears the origin; the next listing reads KV's map again.
    origin.remember(entry("t10000"), 1);
    expect([...origin.tools.keys()]).toEqual(["t10000"]);
    expect([...origin.listed.keys()]).toEqual(["t10000"]);
    expect(origin.loaded).toBeUndefined();
  });

  it("keeps one name per tool and one tool per name, per profile", () => {
    const names = new ToolMapMemory().origin("o").profile("openai");
    names.remember("a_b", "a/b");
    names.remember("a_b_g8wk3l", "a/b"); // a/b renamed: its old name goes
    expect([...names.byName.keys()]).toEqual(["a_b_g8wk3l"]);
    names.remember("a_b_g8wk3l", "a.b"); // the name now stands for another tool
    expect([...names.byOriginal]).toEqual([["a.b", "a_b_g8wk3l"]]);
  });

  it("forgets everything of an origin, and only of that origin, on clear", () => {
    const memory = new ToolMapMemory();
    memory.origin("a").remember(entry("x"));
    memory.origin("b").remember(entry("y"));
    memory.origin("a").clear();
    expect(memory.origin("a").tools.size).toBe(0);
    expect(memory.origin("b").tools.has("y")).toBe(true);
  });
});
