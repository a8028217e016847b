/**
 * The settings are part of the contract (docs/configuration.md): every
 * setting and binding the Worker reads is documented there, every var the
 * table documents is one the Worker reads, and where the table, or the
 * defaults wrangler.toml lists for reference, says a default or the values
 * a setting takes, they are the ones the Worker's own schema has.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { parseConfig, SETTINGS } from "../../src/config";

const ROOT = join(import.meta.dirname, "../..");
const doc = readFileSync(join(ROOT, "docs/configuration.md"), "utf8");
const wranglerToml = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
const names = Object.keys(SETTINGS);

/** The backticked names in upper case in `text`: settings and bindings. */
const namesIn = (text: string) => [...text.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]);

/** The rows of the Settings table: its cells, split on `|` outside code spans. */
function settingRows(): string[][] {
  const section = doc.slice(doc.indexOf("\n## Settings"), doc.indexOf("\n## Bindings"));
  return section
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) =>
      line
        .replace(/`[^`]*`/g, (code) => code.replaceAll("|", "\u0000"))
        .split("|")
        .slice(1, -1)
        .map((cell) => cell.replaceAll("\u0000", "|").trim()),
    );
}

type Schema = (typeof SETTINGS)[keyof typeof SETTINGS];

/** The values a setting takes, when it is one of a list. */
function optionsOf(schema: Schema): readonly string[] | undefined {
  const inner = "wrapped" in schema ? schema.wrapped : schema;
  const steps = "pipe" in inner ? (inner.pipe as ReadonlyArray<{ type: string }>) : [];
  const picklist = steps.find((step) => step.type === "picklist") as
    | { options: readonly string[] }
    | undefined;
  return picklist?.options;
}

const defaultOf = (name: string) => {
  const value = v.getDefault(SETTINGS[name as keyof typeof SETTINGS] as v.GenericSchema);
  return value === undefined ? undefined : String(value);
};

describe("docs/configuration.md", () => {
  it("names every setting and binding the Worker reads", () => {
    const documented = new Set(namesIn(doc));
    expect(names.filter((name) => !documented.has(name))).toEqual([]);
  });

  it("documents no var in the settings table that the Worker does not read", () => {
    const documented = settingRows().flatMap(([first = ""]) => namesIn(first));
    expect(documented.filter((name) => !names.includes(name as string))).toEqual([]);
  });

  it("says the Worker's default where a row says one value", () => {
    const said = settingRows().flatMap(([first = "", fallback = ""]) => {
      const [name, ...others] = namesIn(first);
      const literal = /^`([^`]*)`$/.exec(fallback)?.[1];
      return name && others.length === 0 && literal !== undefined ? [[name, literal]] : [];
    });
    expect(said.length).toBeGreaterThan(5);
    // PROFILE has none of its own in the schema: NAME_PROFILE, its earlier name, comes first.
    const profile = parseConfig({
      ORIGIN_URL: "https://o.example/mcp",
      TOOL_MAP: { get() {}, getWithMetadata() {} },
    } as unknown as Env);
    const worker = (name: string) =>
      name === "PROFILE" && profile.kind === "valid"
        ? profile.config.profile.name
        : defaultOf(name);
    expect(said.map(([name]) => [name, worker(name as string)])).toEqual(said);
  });

  it("lists every value a setting of one row takes", () => {
    for (const [first = "", , meaning = ""] of settingRows()) {
      const [name, ...others] = namesIn(first);
      const options =
        name && others.length === 0
          ? optionsOf(SETTINGS[name as keyof typeof SETTINGS])
          : undefined;
      for (const option of options ?? []) expect(meaning, name).toContain(`\`${option}\``);
    }
  });
});

describe("wrangler.toml's defaults, listed for reference", () => {
  const start = wranglerToml.indexOf("# Defaults, listed for reference:");
  const block = wranglerToml.slice(start, wranglerToml.indexOf("\n\n", start));
  const listed = [...block.matchAll(/^# ([A-Z_]+) = "([^"]*)"(.*)$/gm)];

  it("lists real settings, each with the Worker's default or the values it takes", () => {
    expect(listed.length).toBeGreaterThan(5);
    for (const [, name = "", value, comment = ""] of listed) {
      expect(names, name).toContain(name);
      const fallback = defaultOf(name);
      // A setting without one of its own (NAME_MAX_LENGTH, MAX_TOOLS) shows the profile's.
      if (fallback !== undefined) expect(value, name).toBe(fallback);
      const options = optionsOf(SETTINGS[name as keyof typeof SETTINGS]);
      const said = /[a-z-]+(?:\s*\|\s*[a-z-]+)+/.exec(comment)?.[0];
      const values = said?.split("|").map((option) => option.trim());
      if (options) expect(values?.sort(), name).toEqual([...options].sort());
    }
  });
});
