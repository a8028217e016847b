/**
 * What an isolate keeps of the tool map in memory, and what it lets go:
 * README's "at most 16 origin scopes and 10,000 tools each".
 */
import { describe, expect, it } from "vitest";
import { ToolMapMemory } from "../../src/toolmap/tool-map";

const entry = (original: string) => ({ original, schemaHash: "h" });

describe("the isolate's memory of the tool map", () => {
  it("keeps 16 scopes and lets the least recently used go for a 17th", () => {
    const memory = new ToolMapMemory();
    for (let i = 0; i < 16; i++) memory.scope(`s${i}`).remember("t", entry(`tool of s${i}`));
    memory.scope("s0"); // used again: s1 is now the least recently used
    memory.scope("s16").remember("t", entry("tool of s16"));

    expect(memory.scope("s0").byName.get("t")?.original).toBe("tool of s0");
    expect(memory.scope("s16").byName.get("t")?.original).toBe("tool of s16");
    for (let i = 15; i >= 2; i--) {
      expect(memory.scope(`s${i}`).byName.get("t")?.original).toBe(`tool of s${i}`);
    }
    expect(memory.scope("s1").byName.size).toBe(0);
  });

  it("holds 10,000 tools of a scope, and forgets the scope for the 10,001st", () => {
    const scope = new ToolMapMemory().scope("s");
    scope.loaded = Promise.resolve(true);
    for (let i = 0; i < 10_000; i++) scope.remember(`t${i}`, entry(`o${i}`));
    expect(scope.byName.size).toBe(10_000);
    expect(scope.byOriginal.size).toBe(10_000);

    // A known name is replaced in place, at the bound too.
    scope.remember("t0", entry("o0"));
    expect(scope.byName.size).toBe(10_000);

    // A new one clears the scope; the next listing reads the names from KV again.
    scope.remember("t10000", entry("o10000"));
    expect([...scope.byName.keys()]).toEqual(["t10000"]);
    expect([...scope.byOriginal]).toEqual([["o10000", "t10000"]]);
    expect(scope.loaded).toBeUndefined();
  });

  it("keeps one name per tool and one tool per name", () => {
    const scope = new ToolMapMemory().scope("s");
    scope.remember("a_b", entry("a/b"));
    scope.remember("a_b_2", entry("a/b")); // a/b renamed: its old name goes
    expect([...scope.byName.keys()]).toEqual(["a_b_2"]);
    scope.remember("a_b_2", entry("a.b")); // the name now stands for another tool
    expect([...scope.byOriginal]).toEqual([["a.b", "a_b_2"]]);
  });

  it("forgets everything of a scope, and only of that scope, on clear", () => {
    const memory = new ToolMapMemory();
    memory.scope("a").remember("t", entry("x"));
    memory.scope("b").remember("t", entry("y"));
    memory.scope("a").clear();
    expect(memory.scope("a").byName.size).toBe(0);
    expect(memory.scope("b").byName.get("t")?.original).toBe("y");
  });
});
