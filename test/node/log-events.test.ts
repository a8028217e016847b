/**
 * The log lines are part of the behavior (docs/logs.md): every event the
 * table documents is asserted logged by at least one test (an `expect` in a
 * test file, not a fixture, a comment or an assertion that it is absent),
 * every event the proxy logs is in the table, and every field a line is
 * written with, every value it writes literally and every reason a sign-in
 * fails with, is in its event's row.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => join(ROOT, dir, file));
}

/** The events of docs/logs.md's table: the backticked names in each row's first cell. */
function documented(): string[] {
  const table = readFileSync(join(ROOT, "docs/logs.md"), "utf8");
  return table
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .flatMap((line) =>
      [...(line.split("|")[1] ?? "").matchAll(/`([a-z_]+)`/g)].map((m) => m[1] as string),
    );
}

/** The events src/ logs: every `"name"` right after `logEvent(`, or in a conditional there. */
function logged(): string[] {
  const names = new Set<string>();
  for (const file of filesUnder("src")) {
    const source = readFileSync(file, "utf8");
    for (const call of source.matchAll(/logEvent\(([^,{]+)[,)]/g)) {
      // Event names have an underscore; other strings in a conditional there do not.
      for (const name of (call[1] ?? "").matchAll(/"([a-z]+_[a-z_]+)"/g))
        names.add(name[1] as string);
    }
  }
  return [...names].sort();
}

/** The fields each event's row documents: the backticked words of its last cell. */
function documentedFields(): Map<string, Set<string>> {
  const fields = new Map<string, Set<string>>();
  const table = readFileSync(join(ROOT, "docs/logs.md"), "utf8");
  for (const line of table.split("\n").filter((row) => row.startsWith("| `"))) {
    const cells = line.split("|");
    const said = new Set(
      [...(cells.at(-2) ?? "").matchAll(/`([^`]+)`/g)].map((m) => m[1] as string),
    );
    for (const [, event] of (cells[1] ?? "").matchAll(/`([a-z_]+)`/g))
      fields.set(event as string, said);
  }
  return fields;
}

/** The text from `open` (a bracket) to the bracket that closes it. */
function bracketed(source: string, open: number): string {
  let depth = 0;
  for (let at = open; at < source.length; at++) {
    if ("({[".includes(source[at] as string)) depth++;
    else if (")}]".includes(source[at] as string) && --depth === 0)
      return source.slice(open, at + 1);
  }
  return source.slice(open);
}

/**
 * Each `logEvent` call src/ makes with an object written in it: the events it
 * may write (string literals of its first argument) and that object's text.
 */
function* logEventCalls(): Generator<{ events: string[]; object: string; at: string }> {
  for (const file of filesUnder("src")) {
    const source = withoutComments(readFileSync(file, "utf8"));
    for (const call of source.matchAll(/logEvent\(/g)) {
      const args = bracketed(source, (call.index ?? 0) + "logEvent".length);
      const events = [...(/^\(([^,{]+),/.exec(args)?.[1] ?? "").matchAll(/"([a-z]+_[a-z_]+)"/g)];
      const object = args.indexOf("{");
      if (object === -1) continue;
      yield {
        events: events.map((m) => m[1] as string),
        object: bracketed(args, object),
        at: file,
      };
    }
  }
}

/**
 * The fields src/ writes for each event: the keys an object written in the
 * `logEvent` call names itself (a spread's are the type's it spreads, not read here).
 */
function loggedFields(): Array<{ event: string; field: string; at: string }> {
  const found: Array<{ event: string; field: string; at: string }> = [];
  for (const { events, object, at } of logEventCalls()) {
    // The object's members at its own level: nested brackets and strings set aside.
    const members = object
      .slice(1, -1)
      .replace(/"(?:[^"\\]|\\.)*"|`[^`]*`/g, (text) => (text.startsWith('"') ? text : "``"))
      .replace(/\([^()]*\)|\[[^[\]]*\]|\{[^{}]*\}/g, "")
      .replace(/\([^()]*\)|\[[^[\]]*\]|\{[^{}]*\}/g, "");
    for (const member of members.split(",")) {
      const key = /^\s*(?:"([^"]+)"|([A-Za-z_$][\w$]*))\s*(?::|$)/.exec(member);
      const field = key?.[1] ?? key?.[2];
      if (field === undefined) continue;
      for (const event of events) found.push({ event, field, at });
    }
  }
  return found;
}

/** The row of each event of docs/logs.md's table, as written. */
function documentedRows(): Map<string, string> {
  const rows = new Map<string, string>();
  const table = readFileSync(join(ROOT, "docs/logs.md"), "utf8");
  for (const line of table.split("\n").filter((row) => row.startsWith("| `"))) {
    for (const [, event] of (line.split("|")[1] ?? "").matchAll(/`([a-z_]+)`/g))
      rows.set(event as string, line);
  }
  return rows;
}

/**
 * The values src/ writes literally in each event's lines: a string given to a
 * member of the `logEvent` call's object (`op: "get"`), or as a conditional's
 * branch there (`reason: known ? error.reason : "internal"`).
 */
function loggedValues(): Array<{ event: string; value: string; at: string }> {
  const found: Array<{ event: string; value: string; at: string }> = [];
  for (const { events, object, at } of logEventCalls()) {
    for (const [, value] of object.matchAll(/:\s*"([a-z][a-z_ ]*)"/g)) {
      for (const event of events) found.push({ event, value: value as string, at });
    }
  }
  return found;
}

/**
 * The reasons a sign-in behind the proxy fails with (`sign_in_failed`'s
 * `reason`): each `UpstreamError` src/ makes with a reason of its own, and
 * each step `attempt` names one for.
 */
function signInFailures(): string[] {
  const reasons = new Set<string>();
  for (const file of filesUnder("src")) {
    const source = withoutComments(readFileSync(file, "utf8"));
    for (const [, reason] of source.matchAll(/(?:new UpstreamError|attempt)\(\s*"([a-z_]+)"/g))
      reasons.add(reason as string);
  }
  return [...reasons].sort();
}

/** `source` without its comments (line comments that follow code or a string's `:` kept apart). */
const withoutComments = (source: string) =>
  source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");

/** An assertion that a line was not logged: an empty list of lines, or none of one. */
const ABSENT =
  /toEqual\(\[\]\)|(?<!\.not\.)toHaveLength\(0\)|\.not\.to(Contain|ContainEqual|MatchObject)\b/;

/**
 * Whether a test's `source` asserts `event` logged: a statement that names it
 * is an `expect`, or binds what names it to a name a later `expect` reads.
 */
function assertsLogged(source: string, event: string): boolean {
  const statements = source.split(";");
  const expects = (statement: string) => /\bexpect\b/.test(statement) && !ABSENT.test(statement);
  return statements.some((statement, i) => {
    if (!statement.includes(`"${event}"`)) return false;
    if (expects(statement)) return true;
    const bound = /\b(?:const|let)\s+(\[[^\]]*\]|\{[^}]*\}|\w+)\s*=/.exec(statement)?.[1] ?? "";
    const names = bound.match(/\w+/g) ?? [];
    return statements
      .slice(i + 1)
      .some(
        (later) =>
          expects(later) &&
          names.some((name) => new RegExp(`expect\\([^]*\\b${name}\\b`).test(later)),
      );
  });
}

describe("the log table", () => {
  it("documents every event the proxy logs, and no other", () => {
    expect([...new Set(documented())].sort()).toEqual(logged());
  });

  it("documents each field the proxy writes in its event's row", () => {
    const documented = documentedFields();
    const written = loggedFields();
    expect(written.length).toBeGreaterThan(100);
    const undocumented = written.filter(({ event, field }) => !documented.get(event)?.has(field));
    expect(undocumented).toEqual([]);
  });

  it("names in each event's row the values the proxy writes in it literally", () => {
    const rows = documentedRows();
    const written = loggedValues();
    expect(written.length).toBeGreaterThan(10);
    const undocumented = written.filter(
      ({ event, value }) => !rows.get(event)?.includes(`\`${value}\``),
    );
    expect(undocumented).toEqual([]);
  });

  it("names in sign_in_failed's row each reason a sign-in fails with", () => {
    const row = documentedRows().get("sign_in_failed") ?? "";
    const reasons = signInFailures();
    expect(reasons.length).toBeGreaterThan(10);
    expect(reasons.filter((reason) => !row.includes(`\`${reason}\``))).toEqual([]);
  });

  it("has a test asserting each event it documents", () => {
    const tests = filesUnder("test")
      .filter((file) => file.endsWith(".test.ts") && !file.endsWith("log-events.test.ts"))
      .map((file) => withoutComments(readFileSync(file, "utf8")));
    const unasserted = documented().filter(
      (event) => !tests.some((source) => assertsLogged(source, event)),
    );
    expect(unasserted).toEqual([]);
  });

  it("counts an event as asserted only where a test expects it logged", () => {
    const event = "tool_name_taken";
    const asserted = (source: string) => assertsLogged(withoutComments(source), event);
    expect(asserted(`expect(logs.events("${event}")).toHaveLength(1);`)).toBe(true);
    expect(
      asserted(`const [line] = logs.events("${event}");\nexpect(line).toMatchObject({});`),
    ).toBe(true);
    expect(asserted(`expect(events("${event}")).not.toHaveLength(0);`)).toBe(true);
    // Named in a comment, a fixture, a line never asserted, or asserted absent: not asserted.
    expect(asserted(`// "${event}"\nexpect(1).toBe(1);`)).toBe(false);
    expect(asserted(`/* "${event}" */ expect(1).toBe(1);`)).toBe(false);
    expect(asserted(`const fixture = { event: "${event}" };`)).toBe(false);
    expect(asserted(`const lines = logs.events("${event}");\nexpect(other).toBe(1);`)).toBe(false);
    expect(asserted(`expect(logs.events("${event}")).toEqual([]);`)).toBe(false);
    expect(asserted(`expect(logs.events("${event}")).toHaveLength(0);`)).toBe(false);
  });
});
