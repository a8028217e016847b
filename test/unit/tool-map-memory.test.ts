/**
 * What an isolate keeps of the tool map in memory, and what it lets go:
 * docs/tool-map.md's "at most 16 origins and 10,000 tools each".
 */
import { describe, expect, it } from "vitest";
import { nameRules } from "../../src/names/profiles";
import { MAX_TOOLS, ToolMapMemory, toolMapScopes } from "../../src/toolmap/isolate-memory";
import { DEMO_NAMES } from "../helpers/demo-names";

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

  it("holds 10,000 tools of an origin, and lets the least recently remembered go for the next", () => {
    const origin = new ToolMapMemory().origin("o");
    for (let i = 0; i < MAX_TOOLS; i++) origin.remember(entry(`t${i}`), 1);
    expect(origin.tools.size).toBe(MAX_TOOLS);

    // A known tool is remembered anew, at the bound too: now the most recent.
    origin.remember(entry("t0"), 1);
    expect(origin.tools.size).toBe(MAX_TOOLS);

    // A new one takes the place of the least recent (t1; t0 was just remembered).
    origin.remember(entry("t10000"), 1);
    expect(origin.tools.size).toBe(MAX_TOOLS);
    expect(origin.tools.has("t1")).toBe(false);
    expect(origin.tools.has("t0")).toBe(true);
    expect(origin.listed.has("t1")).toBe(false);

    const names = origin.profile("openai");
    for (let i = 0; i <= MAX_TOOLS; i++) names.remember(`n${i}`, `t${i}`);
    expect(names.byName.size).toBe(MAX_TOOLS);
    expect(names.byOriginal.has("t0")).toBe(false);
  });

  it("keeps one name per tool and one tool per name, per profile", () => {
    const names = new ToolMapMemory().origin("o").profile("openai");
    names.remember("a_b", "a/b");
    names.remember(DEMO_NAMES["a/b"], "a/b"); // a/b renamed: its old name goes
    expect([...names.byName.keys()]).toEqual([DEMO_NAMES["a/b"]]);
    names.remember(DEMO_NAMES["a/b"], "a.b"); // the name now stands for another tool
    expect([...names.byOriginal]).toEqual([["a.b", DEMO_NAMES["a/b"]]]);
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

describe("an origin's KV scopes", () => {
  it("name its keys as every earlier version did: SHA-256 of the origin URL (and profile, for layout 1), first 8 bytes in hex", async () => {
    // `printf 'https://origin.example/mcp\nopenai\n64' | openssl dgst -sha256`, first 16 hex digits.
    expect(await toolMapScopes(new URL("https://origin.example/mcp"), nameRules("openai"))).toEqual(
      { origin: "v2:80f1dc6c3ea2d928", legacy: "v1:7a801470ec00e423" },
    );
  });
});
