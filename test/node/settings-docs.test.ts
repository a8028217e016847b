/**
 * The settings are part of the contract (docs/configuration.md): every
 * setting the Worker reads has a row of the Settings table (a binding, an
 * entry of Bindings), every name a table of settings in docs/ documents is
 * one the Worker reads, and where such a table (or the defaults wrangler.toml
 * lists for reference) says a default, the values a setting takes or the
 * bounds of a number, they are the ones the Worker's own schema has.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { SECRET_SETTINGS } from "../../scripts/lib/secrets-file";
import { parseConfig, SETTINGS } from "../../src/config";
import { MODE_SETTINGS } from "../../src/config/auth-modes";

const ROOT = join(import.meta.dirname, "../..");
const doc = readFileSync(join(ROOT, "docs/configuration.md"), "utf8");
const wranglerToml = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
const names = Object.keys(SETTINGS);

/** The backticked names in upper case in `text`: settings and bindings. */
const namesIn = (text: string) => [...text.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]);

/** A table row's cells, split on `|` outside code spans. */
const cellsOf = (line: string) =>
  line
    .replace(/`[^`]*`/g, (code) => code.replaceAll("|", "\u0000"))
    .split("|")
    .slice(1, -1)
    .map((cell) => cell.replaceAll("\u0000", "|").trim());

interface SettingRow {
  where: string;
  /** The settings the row is of: the names in its first cell. */
  settings: string[];
  fallback: string;
  meaning: string;
}

/**
 * The rows of every table of settings in docs/: a table whose columns are a
 * setting (`var`, `setting`), its `default`, and what it means.
 */
function settingRows(): SettingRow[] {
  const rows: SettingRow[] = [];
  for (const file of readdirSync(join(ROOT, "docs")).filter((name) => name.endsWith(".md"))) {
    let inTable = false;
    for (const line of readFileSync(join(ROOT, "docs", file), "utf8").split("\n")) {
      if (!line.startsWith("|")) inTable = false;
      else if (/^\| (?:var|setting) \| default \|/.test(line)) inTable = true;
      else if (inTable && line.startsWith("| `")) {
        const [first = "", fallback = "", meaning = ""] = cellsOf(line);
        rows.push({
          where: `docs/${file}`,
          settings: namesIn(first) as string[],
          fallback,
          meaning,
        });
      }
    }
  }
  return rows;
}

/** docs/configuration.md's section under `heading`, to the next one of its level. */
function section(heading: string): string {
  const start = doc.indexOf(`\n## ${heading}\n`);
  const end = doc.indexOf("\n## ", start + 1);
  return doc.slice(start, end === -1 ? undefined : end);
}

type Schema = (typeof SETTINGS)[keyof typeof SETTINGS];

/** The steps of a setting's schema, a default around it set aside. */
function stepsOf(schema: Schema): ReadonlyArray<{ type: string; requirement?: unknown }> {
  const inner = "wrapped" in schema ? schema.wrapped : schema;
  return "pipe" in inner ? (inner.pipe as ReadonlyArray<{ type: string }>) : [];
}

/** The values a setting takes, when it is one of a list. */
function optionsOf(schema: Schema): readonly string[] | undefined {
  const picklist = stepsOf(schema).find((step) => step.type === "picklist") as
    | { options: readonly string[] }
    | undefined;
  return picklist?.options;
}

/**
 * The bounds of a number a setting takes that its row must say: its least
 * (but 1, which the table says of every number) and its largest.
 */
function boundsOf(schema: Schema): number[] {
  return stepsOf(schema).flatMap(({ type, requirement }) =>
    (type === "min_value" && requirement !== 1) ||
    (type === "max_value" && requirement !== Number.MAX_SAFE_INTEGER)
      ? [requirement as number]
      : [],
  );
}

/** How a row may write `bound`: `720`, `1,000`, `128 KiB`, `16 MiB`. */
const writtenBounds = (bound: number) => [
  String(bound),
  bound.toLocaleString("en-US"),
  ...(bound % 1024 === 0 ? [`${bound / 1024} KiB`] : []),
  ...(bound % (1024 * 1024) === 0 ? [`${bound / (1024 * 1024)} MiB`] : []),
];

/** Whether `text` writes `bound` (a number not part of a longer one). */
const says = (text: string, bound: number) =>
  writtenBounds(bound).some((form) =>
    new RegExp(`(?<!\\d|\\d[.,])${form.replace(/[.,]/g, "\\$&")}(?!\\d|[.,]\\d)`).test(text),
  );

const defaultOf = (name: string) => {
  const value = v.getDefault(SETTINGS[name as keyof typeof SETTINGS] as v.GenericSchema);
  return value === undefined ? undefined : String(value);
};

/** The row of the one setting `row` is of, when it is of one. */
const oneSetting = (row: SettingRow) => (row.settings.length === 1 ? row.settings[0] : undefined);

describe("docs/configuration.md", () => {
  it("names every setting and binding the Worker reads", () => {
    const documented = new Set(namesIn(doc));
    expect(names.filter((name) => !documented.has(name))).toEqual([]);
  });

  it("gives every setting a row of the Settings table, and every binding an entry of Bindings", () => {
    const rows = settingRows().filter((row) => row.where === "docs/configuration.md");
    expect(rows.length).toBeGreaterThan(20);
    // An earlier name, read still, is told in its setting's row: `NAME_PROFILE`, its earlier name.
    const earlier = [...section("Settings").matchAll(/`([A-Z_]+)`, its earlier name/g)];
    const documented = new Set([
      ...rows.flatMap((row) => row.settings),
      ...earlier.map(([, name]) => name),
      ...namesIn(section("Bindings")),
    ]);
    expect(names.filter((name) => !documented.has(name))).toEqual([]);
  });
});

describe("the problems the documents quote as examples", () => {
  /** The problems of the settings `vars` beside a valid origin and tool map, as `path: problem`. */
  const told = (vars: Record<string, unknown>) => {
    const result = parseConfig({
      ORIGIN_URL: "https://o.example/mcp",
      TOOL_MAP: { get() {}, getWithMetadata() {} },
      ...vars,
    } as unknown as Env);
    return result.kind === "invalid"
      ? result.problems.map(({ path, problem }) => `${path}: ${problem}`)
      : [];
  };
  const raw = (file: string) => readFileSync(join(ROOT, file), "utf8");
  /** A document's text, its lines joined: a quote may wrap. */
  const text = (file: string) => raw(file).replace(/\s*\n\s*/g, " ");

  it("are the Worker's words for them, as npm run check prints them", () => {
    const examples: Array<[file: string, vars: Record<string, unknown>, quoted: RegExp]> = [
      ["docs/configuration.md", { MAX_TOOLS: "forty" }, /MAX_TOOLS: must be a whole[^\n]*/],
      ["docs/configuration.md", { MAX_TOOLS: "1" }, /`(MAX_TOOLS: must be at least [^`]*)`/],
      [
        "docs/configuration.md",
        { TOOL_RULES: '{"a": 1 "b"}' },
        /TOOL_RULES: is not valid JSON[^\n]*/,
      ],
      ["docs/rules.md", { TOOL_RULES: '{"a": 1 "b"}' }, /TOOL_RULES: is not valid JSON[^\n]*/],
      ["docs/configuration.md", { ARGUMENT_VALIDATON: "enforce" }, /`(did you mean [A-Z_]+\?)`/],
      ["docs/rules.md", { TOOL_RULES: { hid: [] } }, /`(TOOL_RULES\.hid is not a rule[^`]*)`/],
      [
        "docs/rules.md",
        { TOOL_RULES: { hideAnnotated: {} } },
        /`(TOOL_RULES\.hideAnnotated must[^`]*)`/,
      ],
      [
        "docs/rules.md",
        { TOOL_RULES: { hideAnnotated: { destructivehint: true } } },
        /`(TOOL_RULES\.hideAnnotated\.destructivehint:[^`]*)`/,
      ],
      [
        "docs/rules.md",
        { TOOL_RULES: { hide: ["admin.{delete"] } },
        /`(TOOL_RULES\.hide\[0\]: is not a glob[^`]*)`/,
      ],
      [
        "docs/rules.md",
        { TOOL_RULES: '{"hide": [], "hide": []}' },
        /`(TOOL_RULES writes the key[^`]*)`/,
      ],
    ];
    const unsaid = examples.flatMap(([file, vars, quoted]) => {
      // A quote in a code block is a line of it; one in prose may wrap.
      const match = quoted.exec(quoted.source.includes("`") ? text(file) : raw(file));
      // A quote ends where the document cuts it (`…`), or says the rest in its own words.
      const said = (match?.[1] ?? match?.[0] ?? "").replace(/\s*…$/, "").trim();
      const problems = told(vars).flatMap((line) => [line, line.replace(/^([^:]+): /, "$1 ")]);
      return said !== "" && problems.some((line) => line.includes(said))
        ? []
        : [`${file}: ${said || quoted} (the Worker: ${problems.join(" | ")})`];
    });
    expect(unsaid).toEqual([]);
  });
});

describe("docs/configuration.md's settings only another AUTH_MODE reads", () => {
  it("are named, each or by a prefix (`IDP_…`), where Checking settings tells them", () => {
    const list = /only another `AUTH_MODE` reads\s+\(([^)]*)\)/.exec(doc)?.[1] ?? "";
    const named = [...list.matchAll(/`([A-Z][A-Z0-9_]*)(…?)`/g)].map(([, name = "", more]) =>
      more ? (setting: string) => setting.startsWith(name) : (setting: string) => setting === name,
    );
    const moded = MODE_SETTINGS.flatMap(([settings]) => settings);
    expect(named.length).toBeGreaterThan(5);
    expect(moded.filter((setting) => !named.some((names) => names(setting)))).toEqual([]);
    // And nothing more: a prefix that takes in a setting every mode reads (`ORIGIN_…`: ORIGIN_URL).
    const every = names.filter((name) => !moded.includes(name));
    expect(every.filter((setting) => named.some((names) => names(setting)))).toEqual([]);
  });
});

describe("docs/configuration.md's secrets", () => {
  it("are those npm run check takes from a secrets file", () => {
    const list = /not one of the secrets the proxy reads\s+\(([^)]*)\)/.exec(doc)?.[1] ?? "";
    expect(namesIn(list).sort()).toEqual([...SECRET_SETTINGS].sort());
  });
});

describe("the tables of settings in docs/", () => {
  it("say, in docs/configuration.md's row of each setting only some AUTH_MODEs read, which read it", () => {
    const rows = settingRows().filter((row) => row.where === "docs/configuration.md");
    const told = MODE_SETTINGS.flatMap(([settings, modes]) =>
      settings.flatMap((setting) =>
        rows
          .filter((row) => row.settings.includes(setting))
          // `broker mode: …`, `gate mode: …`, `broker and gate mode: …`.
          .map((row) => ({ setting, prefix: `${modes.join(" and ")} mode:`, row })),
      ),
    );
    expect(told.length).toBeGreaterThan(15);
    const unsaid = told
      .filter(({ prefix, row }) => !row.meaning.startsWith(prefix))
      .map(({ setting, prefix }) => `${setting} is not "${prefix} …"`);
    expect(unsaid).toEqual([]);
  });

  it("document no setting the Worker does not read", () => {
    const documented = settingRows().flatMap((row) => row.settings);
    expect(documented.filter((name) => !names.includes(name))).toEqual([]);
  });

  it("give a row of its own to each setting with a default, a list of values or bounds", () => {
    const own = new Set(settingRows().flatMap((row) => oneSetting(row) ?? []));
    const told = names.filter((name) => {
      const schema = SETTINGS[name as keyof typeof SETTINGS];
      return defaultOf(name) || optionsOf(schema) || boundsOf(schema).length > 0;
    });
    expect(told.length).toBeGreaterThan(15);
    // NAME_PROFILE, PROFILE's earlier name, is told in PROFILE's row.
    expect(told.filter((name) => !own.has(name) && name !== "NAME_PROFILE")).toEqual([]);
  });

  it("say the Worker's default where a row says one value", () => {
    const said = settingRows().flatMap((row) => {
      const name = oneSetting(row);
      const literal = /^`([^`]*)`$/.exec(row.fallback)?.[1];
      return name && literal !== undefined ? [[name, literal]] : [];
    });
    expect(said.length).toBeGreaterThan(10);
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

  it("list every value a setting of one row takes", () => {
    let lists = 0;
    for (const row of settingRows()) {
      const name = oneSetting(row);
      const options = name ? optionsOf(SETTINGS[name as keyof typeof SETTINGS]) : undefined;
      if (options) lists++;
      for (const option of options ?? []) expect(row.meaning, name).toContain(`\`${option}\``);
    }
    expect(lists).toBeGreaterThan(5);
  });

  it("say the bounds of every number a setting of one row takes", () => {
    const unsaid: string[] = [];
    let bounds = 0;
    for (const row of settingRows()) {
      const name = oneSetting(row);
      for (const bound of name ? boundsOf(SETTINGS[name as keyof typeof SETTINGS]) : []) {
        bounds++;
        if (!says(`${row.fallback} ${row.meaning}`, bound)) unsaid.push(`${name}: ${bound}`);
      }
    }
    expect(unsaid).toEqual([]);
    expect(bounds).toBeGreaterThan(6);
  });

  it("read a bound as the tables write it", () => {
    expect(says("at most 16 MiB", 16 * 1024 * 1024)).toBe(true);
    expect(says("128 KiB to 16 MiB", 128 * 1024)).toBe(true);
    expect(says("at most 1,000 entries", 1000)).toBe(true);
    expect(says("1 to 720", 720)).toBe(true);
    expect(says("at least 12", 2)).toBe(false);
    expect(says("at most 2,560", 256)).toBe(false);
    expect(says("at most 25.6", 25)).toBe(false);
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

  it("says the bounds of each number it lists, where its comment tells them", () => {
    // A setting's comment goes on in the lines below it that hold a comment alone.
    const comments = block.split(/^(?=# [A-Z_]+ = ")/m).flatMap((entry) => {
      const name = /^# ([A-Z_]+) = /.exec(entry)?.[1];
      return name === undefined ? [] : [[name, entry.replace(/^# [A-Z_]+ = "[^"]*"/, "")] as const];
    });
    const told = comments.filter(([, comment]) => /\d/.test(comment));
    expect(told.length).toBeGreaterThan(4);
    const unsaid = told.flatMap(([name, comment]) =>
      boundsOf(SETTINGS[name as keyof typeof SETTINGS])
        .filter((bound) => !says(comment, bound))
        .map((bound) => `${name}: ${bound}`),
    );
    expect(unsaid).toEqual([]);
  });
});
