/**
 * The errors the proxy answers itself are part of the contract
 * (docs/errors.md): the JSON-RPC codes its table gives are the proxy's, every
 * code the proxy answers with is in it, and every message it quotes is one
 * the proxy writes (its placeholders, `<name>`, `N` and `…`, standing for
 * what each answer fills in). What each row's request gets is asserted through
 * the proxy in test/worker/errors.test.ts.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/protocol/jsonrpc";

const ROOT = join(import.meta.dirname, "../..");
const doc = readFileSync(join(ROOT, "docs/errors.md"), "utf8");

/** Every source file of the Worker. */
const source = readdirSync(join(ROOT, "src"), { recursive: true, encoding: "utf8" })
  .filter((file) => file.endsWith(".ts"))
  .map((file) => readFileSync(join(ROOT, "src", file), "utf8"))
  .join("\n");

/** The rows of the table. */
const rows = doc
  .split("\n")
  .filter((line) => line.startsWith("| ") && !line.startsWith("| situation"));

/** The last cell of each row: what the client gets. */
const bodies = rows
  .map((line) => line.replace(/`[^`]*`/g, (code) => code.replaceAll("|", "\u0000")))
  .map((line) => (line.split("|").at(-2) ?? "").replaceAll("\u0000", "|"));

/**
 * The messages the table quotes: in a code span, a sentence (`Unknown tool:
 * <name>`, not a header such as `Retry-After: 60`) or an `{"error":"…"}` with
 * words; in prose, text in double quotes.
 */
function quotedMessages(): string[] {
  return bodies.flatMap((body) => [
    ...[...body.matchAll(/`([^`]+)`/g)].flatMap(([, code = ""]) => {
      const error = /^\{"error":"([^"]*\s[^"]*)"\}$/.exec(code)?.[1];
      if (error !== undefined) return [error];
      return /^[A-Z]/.test(code) && /\s/.test(code) && !/^[A-Z][A-Za-z-]*: /.test(code)
        ? [code]
        : [];
    }),
    ...[...body.replace(/`[^`]*`/g, "").matchAll(/"([A-Z][^"]*)"/g)].map(([, text = ""]) => text),
  ]);
}

/** The parts of a quoted message the proxy writes as they are: what its placeholders leave. */
const fixedParts = (message: string) =>
  message
    .split(/…|<[^>]+>|\bN\b/)
    .map((part) => part.trim())
    .filter((part) => part.length >= 4);

describe("docs/errors.md", () => {
  it("gives the JSON-RPC codes the proxy answers with, and no other", () => {
    const documented = new Set(
      rows.flatMap((row) => [...row.matchAll(/`(-32\d{3})`/g)].map(([, code]) => Number(code))),
    );
    expect([...documented].sort()).toEqual(Object.values(ErrorCode).sort());
    // Each code the proxy answers with is one of ErrorCode's: none is written elsewhere (nor
    // named in a comment, the table aside).
    const written = [...source.matchAll(/-32\d{3}\b/g)].map(([code]) => Number(code));
    expect(written.filter((code) => !documented.has(code))).toEqual([]);
  });

  it("quotes only messages the proxy writes", () => {
    const messages = quotedMessages();
    // Not vacuous: the table quotes a dozen messages and more.
    expect(messages.length).toBeGreaterThan(10);
    const unwritten = messages.flatMap((message) =>
      fixedParts(message).filter((part) => !source.includes(part)),
    );
    expect(unwritten).toEqual([]);
  });

  it("reads a message's placeholders as what the proxy fills in", () => {
    expect(fixedParts("Tool <name> is held: …")).toEqual(["Tool", "is held:"]);
    expect(fixedParts("This answer would pass the N bytes")).toEqual([
      "This answer would pass the",
      "bytes",
    ]);
  });
});
