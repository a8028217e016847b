import { afterEach, describe, expect, it, vi } from "vitest";
import { logEvent, WholeText, withLogBudget } from "../../src/log";

afterEach(() => {
  vi.restoreAllMocks();
});

function logged(fields: Record<string, unknown>): {
  line: string;
  parsed: Record<string, unknown>;
} {
  const log = vi.spyOn(console, "log").mockImplementation(() => {});
  logEvent("test_event", fields);
  const line = String(log.mock.calls[0]?.[0]);
  return { line, parsed: JSON.parse(line) };
}

describe("a log line", () => {
  it("carries short fields as they are", () => {
    expect(logged({ name: "files.read", count: 3, list: ["a", "b"] }).parsed).toEqual({
      event: "test_event",
      name: "files.read",
      count: 3,
      list: ["a", "b"],
    });
  });

  it("is bounded however large the input it describes", () => {
    const { line, parsed } = logged({
      name: "x".repeat(3_000_000),
      keys: Array.from({ length: 50_000 }, (_, i) => `key_${i}`),
      nested: { deeper: { deeper: { deeper: { deeper: { deeper: { deeper: { end: 1 } } } } } } },
    });
    expect(line.length).toBeLessThan(8 * 1024);
    expect(parsed.name).toBe(`${"x".repeat(256)}… (2999744 more characters)`);
    expect(parsed.keys).toHaveLength(101);
    expect((parsed.keys as string[])[100]).toBe("… (49900 more)");
  });

  it("writes a command to paste whole, past the characters a string keeps, within the line's bound", () => {
    const command = `npm run holds -- accept ${"r".repeat(300)} --pin p --env acme`;
    expect(logged({ accept: new WholeText(command) }).parsed.accept).toBe(command);
    vi.restoreAllMocks();
    const { line } = logged({ accept: new WholeText("x".repeat(20_000)) });
    expect(JSON.parse(line)).toEqual({ event: "test_event", cut: "20034 characters" });
  });

  it("stays within 16 KiB however many entries its lists hold, inside one another", () => {
    // A listing's schemas_adapted line as an origin can shape it: 200 tools, each with 200
    // keywords left out under long paths, was one line of 2.8 MB, past the 256 KB of an
    // invocation's lines Workers Logs keeps (and so every line after it).
    const tools = Array.from({ length: 200 }, (_, i) => ({
      tool: `tool_${i}`,
      rules: ["refs"],
      dropped: Array.from({ length: 200 }, (_, j) => `properties.${"k".repeat(300)}${j}`),
    }));
    const { line, parsed } = logged({ profile: "gemini", tools });
    expect(line.length).toBeLessThanOrEqual(16 * 1024);
    // Every field is there, each list cut alike, each cut saying what it left out.
    expect(parsed.profile).toBe("gemini");
    const kept = parsed.tools as Array<{ tool: string; rules: string[]; dropped: string[] }>;
    expect(kept.at(-1)).toBe(`… (${200 - (kept.length - 1)} more)`);
    const [first] = kept;
    expect(first).toMatchObject({ tool: "tool_0", rules: ["refs"] });
    const dropped = first?.dropped ?? [];
    expect(dropped.at(-1)).toBe(`… (${200 - (dropped.length - 1)} more)`);
  });

  it("stays within 16 KiB whatever fields it is written with, saying how long they were", () => {
    const fields = Object.fromEntries(
      Array.from({ length: 100 }, (_, i) => [`field_${i}`, "x".repeat(300)]),
    );
    const { line, parsed } = logged(fields);
    expect(line.length).toBeLessThanOrEqual(16 * 1024);
    expect(parsed).toEqual({ event: "test_event", cut: expect.stringMatching(/^\d+ characters$/) });
  });

  it("writes no control character raw, so the terminal of npm run dev or wrangler tail acts on none", () => {
    // A tool's name as a hostile origin may write it: set the clipboard (OSC 52), clear the screen,
    // in the 8-bit controls JSON.stringify leaves raw, and in their 7-bit forms, which it escapes.
    const name = "report\u009d52;c;cm0gLXJmIH4=\u009c\u009b2J\u007f\u001b]52;c;eA==\u0007";
    const { line, parsed } = logged({ tool: name });
    // biome-ignore lint/suspicious/noControlCharactersInRegex: what must not be written.
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(parsed.tool).toBe(name);
  });

  it("writes no character raw that a terminal shows as nothing: tags, a soft hyphen, variation selectors", () => {
    // Unicode's tag characters spell text no terminal shows ("ASCII smuggling"): a tool named so
    // reads as "files.read" in wrangler tail and says more to whatever reads it.
    const tags = [..."ignore"].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join("");
    const name = `files.read${tags}\u00ad\ufe0f`;
    const { line, parsed } = logged({ tool: name });
    expect(line).not.toMatch(/\u00ad|[\ufe00-\ufe0f]|[\u{e0000}-\u{e007f}]/u);
    expect(line).toContain("\\udb40\\udc69");
    expect(parsed.tool).toBe(name);
  });

  it("writes no character raw that reorders or hides text on a terminal", () => {
    // "\u202Edaer.elif" shows as "file.read"; a zero-width space or a BOM is not seen at all.
    const name = "\u202Edaer.elif\u2066x\u2069\u200Bfiles\uFEFF.read\u2028\u061C";
    const { line, parsed } = logged({ tool: name });
    expect(line).not.toMatch(/[\u061C\u200B-\u200F\u2028-\u202E\u2060-\u2069\uFEFF]/);
    expect(line).toContain("\\u202e");
    expect(parsed.tool).toBe(name);
  });

  it("cuts a string between characters, and writes no half of one, which strict JSON readers refuse", () => {
    // A name as a client calls it: the 256th character is an emoji's first half. Sliced there,
    // the line held `\ud83d` alone, JSON that a strict reader (Rust's serde_json) refuses whole.
    const { line, parsed } = logged({ name: `${"a".repeat(255)}\u{1F600}b`, key: "x\ud800y" });
    expect(line).not.toMatch(/\\ud[89a-f]/i);
    // Asked first: a lone surrogate in a failure's message breaks the test runner's own channel.
    expect([parsed.name, parsed.key].every((text) => String(text).isWellFormed())).toBe(true);
    expect(parsed.name).toBe(`${"a".repeat(255)}… (3 more characters)`);
    // What an origin or a client wrote with a half of a character alone: U+FFFD, as UTF-8 has it.
    expect(parsed.key).toBe("x\ufffdy");
  });
});

describe("a request's lines", () => {
  const utf8 = (line: unknown) => new TextEncoder().encode(String(line)).byteLength;
  /** Writes `count` lines, each with a long list and `n`, within one budget when `budgeted`. */
  function writeLines(count: number, budgeted: boolean) {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const write = () => {
      for (let n = 0; n < count; n++) {
        logEvent("tool_call_repaired", {
          tool: "reports.query",
          n,
          renamed: false,
          coercions: Array.from({ length: 100 }, (_, i) => `filters.${"é".repeat(60)}${i}`),
          empty: null,
        });
      }
    };
    if (budgeted) withLogBudget(write);
    else write();
    const lines = log.mock.calls.map(([line]) => line);
    log.mockRestore();
    return lines;
  }

  it("stay within half the 256 KB Workers Logs keeps of an invocation, each message's line written, short", () => {
    const lines = writeLines(300, true);
    expect(lines).toHaveLength(300);
    const full = lines.filter((line) => !String(line).includes('"log_budget"'));
    expect(full.length).toBeGreaterThan(0);
    expect(full.reduce((bytes, line) => bytes + utf8(line), 0)).toBeLessThanOrEqual(128 * 1024);
    const total = lines.reduce((bytes, line) => bytes + utf8(line), 0);
    expect(total).toBeLessThan(192 * 1024);
    // Past the budget, a line is its event and scalar fields: which message, which tool.
    expect(JSON.parse(String(lines[299]))).toEqual({
      event: "tool_call_repaired",
      tool: "reports.query",
      n: 299,
      renamed: false,
      log_budget: "spent",
    });
  });

  it("are written whole outside a request, and each request has a budget of its own", async () => {
    expect(writeLines(300, false).some((line) => String(line).includes("log_budget"))).toBe(false);
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const request = (n: number) =>
      withLogBudget(async () => {
        for (let i = 0; i < 40; i++) {
          await Promise.resolve();
          logEvent("line", { n, text: "x".repeat(200), list: ["y".repeat(250), "z".repeat(250)] });
        }
      });
    await Promise.all([request(1), request(2), request(3), request(4)]);
    // 160 lines of some 750 bytes, 40 each: past one budget together, within each alone.
    expect(log.mock.calls.some(([line]) => String(line).includes("log_budget"))).toBe(false);
  });

  it("keeps a key named __proto__ past the budget an ordinary field", () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    withLogBudget(() => {
      for (let i = 0; i < 9; i++) logEvent("filler", { text: new WholeText("x".repeat(16_000)) });
      const list = JSON.stringify(Array.from({ length: 50 }, () => "y".repeat(200)));
      logEvent("last", JSON.parse(`{"__proto__":"p","tool":"t","list":${list}}`));
    });
    expect(JSON.parse(String(log.mock.calls.at(-1)?.[0]))).toEqual({
      event: "last",
      ["__proto__"]: "p",
      tool: "t",
      log_budget: "spent",
    });
  });
});

describe("a request's lines past its budget, with text written whole", () => {
  /** The line of `last` after 600 lines of some 300 bytes (180 KB), within one budget. */
  function pastBudget(last: Record<string, unknown>) {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    withLogBudget(() => {
      for (let i = 0; i < 600; i++) logEvent("filler", { text: "x".repeat(250) });
      logEvent("last", last);
    });
    const line = JSON.parse(String(log.mock.calls.at(-1)?.[0]));
    log.mockRestore();
    return line;
  }

  it("keeps it whole: a command cut would be another", () => {
    const accept = `npm run holds -- accept '${"t".repeat(100)}' --pin ${"p".repeat(70)} --local`;
    expect(pastBudget({ tool: "t", accept: new WholeText(accept) })).toEqual({
      event: "last",
      tool: "t",
      accept,
      log_budget: "spent",
    });
  });

  it("cuts a string between characters, and writes no half of one", () => {
    // 64 characters at most: the cut falls inside the emoji.
    const line = pastBudget({ tool: `${"t".repeat(63)}\u{1F600}`, key: "x\ud800y" });
    expect([line.tool, line.key].every((text) => String(text).isWellFormed())).toBe(true);
    expect(line).toEqual({
      event: "last",
      tool: "t".repeat(63),
      key: "x\ufffdy",
      log_budget: "spent",
    });
  });

  it("leaves it out where the line could not hold it", () => {
    const text = new WholeText("y".repeat(20_000));
    expect(pastBudget({ tool: "t", text })).toEqual({
      event: "last",
      tool: "t",
      log_budget: "spent",
    });
  });
});

describe("a library's own line", () => {
  it("is written as a line of the proxy's, its level a field, escaped, within the request's budget", () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const throwing = {
      toString() {
        throw new Error("no text");
      },
    };
    withLogBudget(() => {
      for (let i = 0; i < 9; i++) logEvent("filler", { text: new WholeText("x".repeat(16_000)) });
      console.warn(
        'CIMD fetch failed for https://client.example/c.json: client_id "\u001b[2J\u009d\u202e"',
        new TypeError("bad document"),
        throwing,
      );
    });
    const lines = log.mock.calls.map(([written]) => String(written));
    expect(lines).toHaveLength(10);
    const line = lines.at(-1);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: what must not be written.
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
    // Past the budget, as any line of the proxy's: its event and its text, written whole.
    expect(JSON.parse(String(line))).toEqual({
      event: "library_line",
      level: "warn",
      text: 'CIMD fetch failed for https://client.example/c.json: client_id "\u001b[2J\u009d\u202e" TypeError: bad document (unprintable)',
      log_budget: "spent",
    });
  });

  it("is written once, whatever replaced the library's console method since", () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    // A spy over the proxy's line that calls it in turn, as vi.spyOn does unmocked.
    vi.spyOn(console, "error");
    withLogBudget(() => console.error("Failed to revoke grant g1"));
    withLogBudget(() => console.error("Failed to revoke grant g2"));
    expect(log.mock.calls.map(([line]) => JSON.parse(String(line)))).toEqual([
      { event: "library_line", level: "error", text: "Failed to revoke grant g1" },
      { event: "library_line", level: "error", text: "Failed to revoke grant g2" },
    ]);
  });
});
