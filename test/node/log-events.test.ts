/**
 * The log lines are part of the behavior (docs/logs.md): every event the
 * table documents is asserted by at least one test, and every event the
 * proxy logs is in the table.
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

describe("the log table", () => {
  it("documents every event the proxy logs, and no other", () => {
    expect([...new Set(documented())].sort()).toEqual(logged());
  });

  it("has a test asserting each event it documents", () => {
    const tests = filesUnder("test")
      .filter((file) => !file.endsWith("log-events.test.ts"))
      .map((file) => readFileSync(file, "utf8"))
      .join("\n");
    const unasserted = documented().filter((event) => !tests.includes(`"${event}"`));
    expect(unasserted).toEqual([]);
  });
});
