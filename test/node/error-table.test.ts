/**
 * The errors the proxy answers itself are part of the contract
 * (docs/errors.md): the JSON-RPC codes its table gives are the proxy's, every
 * code the proxy answers with is in it, and every message it quotes is one
 * the proxy writes (its placeholders, `<name>`, `N` and `…`, standing for
 * what each answer fills in), and each HTTP status the proxy answers with
 * itself has a row that gives it with the JSON-RPC code or OAuth error it
 * comes with. What each row's request gets is asserted through the proxy in
 * test/worker/errors.test.ts.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/protocol/jsonrpc";

const ROOT = join(import.meta.dirname, "../..");
const doc = readFileSync(join(ROOT, "docs/errors.md"), "utf8");

/** Every source file of the Worker, one text each. */
const sources = readdirSync(join(ROOT, "src"), { recursive: true, encoding: "utf8" })
  .filter((file) => file.endsWith(".ts"))
  .map((file) => readFileSync(join(ROOT, "src", file), "utf8"));
const source = sources.join("\n");

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

/** Each row's cells: its HTTP status (as written: `401, or 400 at …`) and what the client gets. */
const statusAndBody = rows.map((line, i) => ({
  status: (
    line
      .replace(/`[^`]*`/g, "")
      .split("|")
      .at(-3) ?? ""
  ).trim(),
  body: bodies[i] ?? "",
}));

/** The text from `open` (a bracket) to the bracket that closes it. */
function bracketed(text: string, open: number): string {
  let depth = 0;
  for (let at = open; at < text.length; at++) {
    if ("({[".includes(text[at] as string)) depth++;
    else if (")}]".includes(text[at] as string) && --depth === 0) return text.slice(open, at + 1);
  }
  return text.slice(open);
}

/**
 * The HTTP status and JSON-RPC code of each error the proxy writes itself with both written
 * out (`errorResponse(413, ErrorCode.InvalidRequest, …)`), also through a helper that passes
 * its `status` on with a code of its own (auth/gate.ts `gateError(request, 403, …)`).
 */
function writtenRpcErrors(): string[] {
  const code = (name: string) => ErrorCode[name as keyof typeof ErrorCode];
  const found = new Set<string>();
  for (const text of sources) {
    for (const [, status, name = ""] of text.matchAll(/\b(\d{3}),\s*ErrorCode\.(\w+)/g))
      found.add(`${status} ${code(name)}`);
    const helpers = text.matchAll(
      /const (\w+) = \([^)]*\bstatus\b[^)]*\)\s*=>\s*\{[^}]*?\(\s*status,\s*ErrorCode\.(\w+)/g,
    );
    for (const [, helper, name = ""] of helpers) {
      for (const [, status] of text.matchAll(
        new RegExp(`\\b${helper}\\(\\s*\\w+,\\s*(\\d{3})`, "g"),
      ))
        found.add(`${status} ${code(name)}`);
    }
  }
  return [...found].sort();
}

/**
 * The HTTP status and `error` of each JSON answer of the proxy's own that is no JSON-RPC
 * message (OAuth's errors, `not_found`, the 404 of a path it does not serve): a
 * `Response.json` with both written out, or a helper called with them
 * (routes/sign-out.ts `refused(401, "invalid_token", …)`).
 */
function writtenJsonErrors(): string[] {
  const found = new Set<string>();
  for (const text of sources) {
    for (const call of text.matchAll(/Response\.json\(/g)) {
      const args = bracketed(text, (call.index ?? 0) + "Response.json".length);
      const error = /\berror: "([^"]+)"/.exec(args)?.[1];
      const status = /\bstatus: (\d{3})/.exec(args)?.[1];
      if (error !== undefined && status !== undefined) found.add(`${status} ${error}`);
    }
    for (const [, status, error] of text.matchAll(/\brefused\(\s*(\d{3}),\s*"([^"]+)"/g))
      found.add(`${status} ${error}`);
  }
  return [...found].sort();
}

/** Whether a row gives `status` (alone or among others: `401, or 400 at /authorize`) with `text` in its body. */
const tableGives = (status: string, text: string) =>
  statusAndBody.some(
    (row) => new RegExp(`(?<!\\d)${status}(?!\\d)`).test(row.status) && row.body.includes(text),
  );

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

  it("gives each HTTP status the proxy answers with, in a row with the JSON-RPC code it comes with", () => {
    const written = writtenRpcErrors();
    // Not vacuous: the proxy answers a dozen such pairs and more (413 with -32600, 504 with -32001, …).
    expect(written.length).toBeGreaterThan(10);
    const missing = written.filter((pair) => {
      const [status = "", code = ""] = pair.split(" ");
      return !tableGives(status, `\`${code}\``);
    });
    expect(missing).toEqual([]);
  });

  it("gives each HTTP status of the proxy's own JSON errors, in a row with the error it names", () => {
    const written = writtenJsonErrors();
    expect(written.length).toBeGreaterThan(8);
    const missing = written.filter((pair) => {
      const [status = "", ...error] = pair.split(" ");
      const text = error.join(" ");
      // An OAuth error code is written as in the body (`{"error":"invalid_token"}`) or alone.
      return !tableGives(status, `"error":"${text}"`) && !tableGives(status, `\`${text}\``);
    });
    expect(missing).toEqual([]);
  });

  it("finds a status only in a row that gives it", () => {
    expect(tableGives("413", "`-32600`")).toBe(true);
    expect(tableGives("499", "`-32001`")).toBe(false);
    expect(tableGives("40", "`-32600`")).toBe(false);
  });

  it("reads a message's placeholders as what the proxy fills in", () => {
    expect(fixedParts("Tool <name> is held: …")).toEqual(["Tool", "is held:"]);
    expect(fixedParts("This answer would pass the N bytes")).toEqual([
      "This answer would pass the",
      "bytes",
    ]);
  });
});
