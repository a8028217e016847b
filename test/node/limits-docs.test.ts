/**
 * The bounds are part of the contract (docs/limits.md): where its table says
 * what one request can cost, each number it gives for a bound the Worker
 * keeps in a constant is that constant's value, written as the table writes
 * it (`16 MiB`, `10,000`, `10 s`). A bound changed in src/ without its row
 * fails here, as does a row that mistypes one. docs/logs.md and SECURITY.md
 * tell some of them in prose (a log line's bounds), and are held to the
 * constants alike.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import {
  MAX_READ_BYTES as MAX_CALL_ANSWER_READ,
  MAX_JUDGED_CHARS,
} from "../../src/analytics/call-answers";
import {
  MAX_CLIENT_CHARS,
  MAX_TOOL_CHARS as MAX_POINT_TOOL_CHARS,
} from "../../src/analytics/data-point";
import { MAX_POINTS_PER_REQUEST } from "../../src/analytics/recorder";
import {
  MAX_TASK_ID_CHARS,
  MAX_TASKS,
  MAX_TASKS_PER_CALLER,
} from "../../src/analytics/task-memory";
import { MAX_BRANCHES } from "../../src/args/schema-reading";
import { MAX_MEMBERSHIP_CHARS, MAX_MEMBERSHIPS } from "../../src/auth/identity";
import { MAX_ORIGIN_SCOPES, MAX_SCOPE_LENGTH } from "../../src/auth/scope-tokens";
import { ORIGIN_KEY_TTL_MS } from "../../src/auth/sign-in-memory";
import { MAX_ANSWER_BYTES as MAX_AUTH_ANSWER_BYTES } from "../../src/auth/upstream-requests";
import { SETTINGS } from "../../src/config";
import { SIGN_IN_DAILY_WRITES } from "../../src/config/auth-modes";
import {
  MAX_BATCH_LIMIT,
  MAX_BODY_LIMIT,
  MAX_LOCAL_ANSWER_LIMIT,
  MIN_LOCAL_ANSWER_LIMIT,
} from "../../src/config/values";
import { MAX_NESTING } from "../../src/json-spans";
import {
  COMPACT_CHARS,
  COMPACT_FIELDS,
  FULL_LINES_BYTES,
  LIST_CUTS,
  MAX_CHARS,
  MAX_DEPTH,
  MAX_ITEMS,
  MAX_LINE_CHARS,
} from "../../src/log";
import { MAX_MATCHED_CHARS } from "../../src/names/match";
import { NAME_WEIGHT_CHARS } from "../../src/names/weight";
import { MAX_READ_PAST_LISTINGS } from "../../src/rewrite/listing-stream";
import { READY_TIMEOUT_MS, READY_TTL_MS } from "../../src/routes/readyz";
import { MAX_GLOBBED_CHARS } from "../../src/rules/globs";
import { CHARS_PER_NODE, MAX_NODES } from "../../src/schemas/pass";
import { TOOL_CEILINGS } from "../../src/schemas/profile";
import {
  CHARS_PER_WEIGHT,
  LISTING_MS,
  MAX_CALLERS,
  MAX_CALLERS_PER_SOURCE,
  MAX_VIEW_WEIGHT,
  MAX_VIEWS,
  SEARCH_WEIGHT,
} from "../../src/toolmap/caller-listings";
import { MAX_NEW_CALLER_WRITES } from "../../src/toolmap/caller-pin-records";
import {
  MAX_HELD_NOTE_CHARS,
  MAX_HELD_NOTES,
  MAX_HELD_PINS,
  MAX_ORIGINS,
  MAX_PROVEN_SOURCES,
  MAX_REMEMBERED_ANSWERS,
  MAX_REMEMBERED_CHARS,
  MAX_TOOL_CHARS,
  MAX_VIEW_INLINED,
  PROVEN_MS,
  REMEMBERED_ANSWER_MS,
} from "../../src/toolmap/isolate-memory";
import { MAX_CHUNK_CHARS, MAX_SCHEMA_CHUNKS } from "../../src/toolmap/map-store";
import {
  MAX_RELISTS,
  MAX_RELISTS_PER_SOURCE,
  MAX_UNPROVEN_RELISTS,
} from "../../src/toolmap/profile-names";
import { MAX_PAGES } from "../../src/toolmap/relist";
import { MAX_QUERY_CHARS, MAX_QUERY_WORDS } from "../../src/toolmap/search-terms";
import { ANSWER_TTL_DAYS, MAX_TOOLS } from "../../src/toolmap/stored-map";
import { MAX_WORDS_READ } from "../../src/toolmap/word-index";
import {
  ALWAYS_TAKEN_BYTES,
  MAX_HELD_BYTES,
  MAX_REWRITE_BYTES,
} from "../../src/transport/read-bounded";
import { LINE_WEIGHT } from "../../src/transport/sse";

const ROOT = join(import.meta.dirname, "../..");
const limits = readFileSync(join(ROOT, "docs/limits.md"), "utf8");
const logs = readFileSync(join(ROOT, "docs/logs.md"), "utf8");

/** A count as the documents write it: `10,000`. */
const n = (count: number) => count.toLocaleString("en-US");

/** A size as the documents write it: `16 MiB`, `64 KiB`, `512 bytes`. */
function bytes(size: number): string {
  if (size % (1024 * 1024) === 0) return `${n(size / (1024 * 1024))} MiB`;
  if (size % 1024 === 0) return `${n(size / 1024)} KiB`;
  return `${n(size)} bytes`;
}

/** A count of characters in the binary units the documents write them in: `16 Mi`, `16 Ki`. */
function chars(count: number): string {
  if (count % (1024 * 1024) === 0) return `${n(count / (1024 * 1024))} Mi`;
  if (count % 1024 === 0) return `${n(count / 1024)} Ki`;
  return n(count);
}

/** A time in milliseconds as the documents write it: `10 s`, `a minute`, `10 minutes`. */
function seconds(ms: number): string {
  if (ms === 60_000) return "a minute";
  return ms % 60_000 === 0 ? `${n(ms / 60_000)} minutes` : `${n(ms / 1000)} s`;
}

const defaultOf = (name: keyof typeof SETTINGS) =>
  Number(v.getDefault(SETTINGS[name] as v.GenericSchema));

/** The row of the table whose first cell begins with `what`. */
function row(what: string): string {
  const found = limits.split("\n").filter((line) => line.startsWith(`| ${what}`));
  expect(found, what).toHaveLength(1);
  return found[0] as string;
}

/**
 * What each row must say, made from the constants it tells: the row's first
 * cell (its beginning), and the texts it writes them in.
 */
const BOUNDS: ReadonlyArray<[string, string[]]> = [
  [
    "POST body",
    [
      `\`MAX_BODY_BYTES\` (${bytes(defaultOf("MAX_BODY_BYTES"))}, at most ${bytes(MAX_BODY_LIMIT)})`,
      `${MAX_NESTING} levels of nesting`,
    ],
  ],
  ["a JSON-RPC batch", [`(${defaultOf("MAX_BATCH_MESSAGES")}, at most ${MAX_BATCH_LIMIT})`]],
  [
    "origin requests per client request",
    [`at most ${MAX_PAGES + 1} at the MCP endpoint`, `of at most ${MAX_PAGES} pages`],
  ],
  [
    "the answers the proxy writes itself",
    [
      `(${bytes(defaultOf("MAX_LOCAL_ANSWER_BYTES"))}, at least ${bytes(MIN_LOCAL_ANSWER_LIMIT)}, at most ${bytes(MAX_LOCAL_ANSWER_LIMIT)})`,
    ],
  ],
  [
    "a JSON answer or event the proxy renames",
    [`| ${bytes(MAX_REWRITE_BYTES)};`, `counting ${LINE_WEIGHT} bytes more`],
  ],
  [
    "what an isolate's requests read whole at once",
    [`| ${bytes(MAX_HELD_BYTES)}, besides each request's first ${bytes(ALWAYS_TAKEN_BYTES)}`],
  ],
  ["JSON the proxy reads", [`| ${MAX_NESTING} levels of nesting`]],
  [
    "what each caller was listed",
    [
      `| ${n(MAX_VIEWS)} views of ${n(MAX_VIEW_WEIGHT)} tools together per isolate`,
      `(a tool in search mode counts ${["none", "one", "two", "three", "four"][SEARCH_WEIGHT]},`,
      `one for every ${CHARS_PER_WEIGHT} characters`,
      `${n(MAX_CALLERS)} callers pointing at them, at most ${MAX_CALLERS_PER_SOURCE} of them of one source`,
      `one source with all ${n(MAX_CALLERS)}), ${seconds(LISTING_MS)};`,
    ],
  ],
  [
    "an origin's tools in an isolate's memory",
    [
      `| ${MAX_ORIGINS} origins; ${n(MAX_TOOLS)} tools each, of ${chars(MAX_TOOL_CHARS)} characters together`,
    ],
  ],
  [
    "schema views that inline",
    [
      `| ${n(MAX_VIEW_INLINED)} nodes inlined together per origin`,
      `one node more for every ${CHARS_PER_NODE} characters`,
      `a view at most ${n(MAX_NODES)}`,
    ],
  ],
  [
    "the map's pins an isolate set",
    [
      `| ${n(2 * MAX_TOOLS)} tools' pins`,
      `${n(2 * MAX_TOOLS)} tools, ${MAX_HELD_PINS} each`,
      `each ${NAME_WEIGHT_CHARS} characters of its name`,
    ],
  ],
  [
    "the tool map in KV",
    [`| ${n(MAX_TOOLS)} tools per origin`, `each ${NAME_WEIGHT_CHARS} characters of its name`],
  ],
  [
    "held changes logged",
    [`| ${n(MAX_HELD_NOTES)} each, each of ${n(MAX_HELD_NOTE_CHARS)} characters of their keys`],
  ],
  [
    "answers remembered",
    [
      `| ${MAX_REMEMBERED_ANSWERS} per isolate, ${chars(MAX_REMEMBERED_CHARS)} characters together`,
      `, ${seconds(REMEMBERED_ANSWER_MS)};`,
      `, ${ANSWER_TTL_DAYS} days |`,
    ],
  ],
  ["a listing's event stream past its listings", [`read ${bytes(MAX_READ_PAST_LISTINGS)} further`]],
  ["argument repair", [`at most ${MAX_BRANCHES} composition branches`]],
  [
    "a call naming a tool the map does not know",
    [
      `(at most ${MAX_PAGES} pages, ${bytes(MAX_REWRITE_BYTES)},`,
      `at most ${MAX_RELISTS} times a minute per isolate and profile, ${MAX_RELISTS_PER_SOURCE} of them for the callers of one source`,
      `and ${MAX_UNPROVEN_RELISTS} of them for every source the origin has not listed in the isolate in the last ${seconds(PROVEN_MS)}`,
      `(${n(MAX_PROVEN_SOURCES)} sources per origin remembered as listed`,
    ],
  ],
  [
    "`GET /readyz`",
    [
      `at most ${seconds(READY_TIMEOUT_MS)} (or \`ORIGIN_TIMEOUT_MS\`)`,
      `at most ${MAX_PAGES + 3} of them`,
      `a listing of at most ${MAX_PAGES} pages`,
      `its result answers for ${seconds(READY_TTL_MS)}`,
    ],
  ],
  [
    "a log line",
    [
      `strings ${MAX_CHARS} characters`,
      `lists ${MAX_ITEMS} entries, ${MAX_DEPTH} levels, ${chars(MAX_LINE_CHARS)} characters in all`,
      `every list cut to ${LIST_CUTS[1]} entries, then to ${LIST_CUTS[2]}`,
    ],
  ],
  [
    "call analytics",
    [
      `its first ${bytes(MAX_CALL_ANSWER_READ)}`,
      `parsed up to ${bytes(MAX_JUDGED_CHARS)}`,
      `${MAX_POINTS_PER_REQUEST} data points a request`,
      `a tool's name ${MAX_POINT_TOOL_CHARS} characters`,
      `the Ray ID ${MAX_CLIENT_CHARS}`,
      `${n(MAX_TASKS)} tasks, ${MAX_TASKS_PER_CALLER} a caller`,
      `a task's id at most ${MAX_TASK_ID_CHARS} characters`,
    ],
  ],
  [
    "a client's first `tools/list` page",
    [
      `at most ${MAX_PAGES} pages, ${bytes(MAX_REWRITE_BYTES)}`,
      `the ${MAX_RELISTS} listings a minute`,
    ],
  ],
  ["`TOOL_CHANGES=log` or `hold`", [`${MAX_NEW_CALLER_WRITES} a minute per isolate`]],
  ["a tool's name, listed or called, matched", [`| at most ${MAX_GLOBBED_CHARS} characters`]],
  ["a call's name matched", [`| at most ${MAX_MATCHED_CHARS} characters`]],
  [
    "a `search_tools` query",
    [
      `its first ${MAX_QUERY_CHARS} characters`,
      `its first ${MAX_QUERY_WORDS} words`,
      `are at most ${MAX_WORDS_READ}`,
    ],
  ],
  [
    "broker and gate sign-in",
    [
      `(${SIGN_IN_DAILY_WRITES}; registrations half of it)`,
      `read to ${bytes(MAX_AUTH_ANSWER_BYTES)}`,
      `${MAX_ORIGIN_SCOPES} of the origin's scopes of ${MAX_SCOPE_LENGTH} characters at most`,
    ],
  ],
  [
    "gate mode",
    [
      `${MAX_MEMBERSHIPS} of ${MAX_MEMBERSHIP_CHARS} characters`,
      `the origin's keys kept ${seconds(ORIGIN_KEY_TTL_MS)}`,
    ],
  ],
];

describe("docs/limits.md's table", () => {
  it("says the bound of each constant of src/ its rows tell, as the constant has it", () => {
    const unsaid = BOUNDS.flatMap(([what, texts]) =>
      texts.filter((text) => !row(what).includes(text)).map((text) => `${what}: ${text}`),
    );
    expect(unsaid).toEqual([]);
  });

  it("writes the bounds in the units the rows use", () => {
    expect([bytes(16 * 1024 * 1024), bytes(64 * 1024), bytes(512)]).toEqual([
      "16 MiB",
      "64 KiB",
      "512 bytes",
    ]);
    expect([chars(16 * 1024 * 1024), chars(16 * 1024), n(10_000)]).toEqual([
      "16 Mi",
      "16 Ki",
      "10,000",
    ]);
    expect([seconds(10_000), seconds(60_000), seconds(600_000)]).toEqual([
      "10 s",
      "a minute",
      "10 minutes",
    ]);
  });
});

describe("the tool map's bounds in docs/tool-map.md and docs/limits.md", () => {
  it("are map-store.ts' and stored-map.ts'", () => {
    const numbers = ["none", "one", "two", "three"];
    const toolMap = readFileSync(join(ROOT, "docs/tool-map.md"), "utf8").replace(/\s+/g, " ");
    expect(toolMap).toContain(
      `at most ${n(MAX_TOOLS)} tools and ${numbers[MAX_SCHEMA_CHUNKS]} chunks of schemas (${chars(MAX_CHUNK_CHARS)} characters each`,
    );
    expect(limits.replace(/\s+/g, " ")).toContain(
      `(up to ${MAX_SCHEMA_CHUNKS} values of ${chars(MAX_CHUNK_CHARS)} characters)`,
    );
  });
});

describe("docs/search-mode.md's table of ceilings", () => {
  it("gives each profile the ceiling it has, none where it has none", () => {
    const doc = readFileSync(join(ROOT, "docs/search-mode.md"), "utf8");
    const table = doc.slice(
      doc.indexOf("\n## The ceiling\n"),
      doc.indexOf("\n## ", doc.indexOf("\n## The ceiling\n") + 1),
    );
    const given = Object.fromEntries(
      table
        .split("\n")
        .filter((line) => line.startsWith("| `"))
        .flatMap((line) => {
          const [, profiles = "", ceiling = ""] = line.split("|").map((cell) => cell.trim());
          const value = ceiling === "none" ? undefined : Number(ceiling.replace(/,/g, ""));
          return [...profiles.matchAll(/`([a-z-]+)`/g)].map(([, profile]) => [profile, value]);
        }),
    );
    expect(given).toStrictEqual(TOOL_CEILINGS);
  });
});

describe("docs/logs.md", () => {
  it("tells a line's bounds and a request's as log.ts keeps them", () => {
    const told = [
      `a string keeps its first ${MAX_CHARS} characters`,
      `a list its first ${MAX_ITEMS} entries`,
      `a line keeps within ${chars(MAX_LINE_CHARS)} characters`,
      `every list cut to its first ${LIST_CUTS[1]} entries`,
      `have taken ${bytes(FULL_LINES_BYTES)}`,
      `its first ${COMPACT_FIELDS} fields`,
      `strings cut to what ${COMPACT_CHARS} characters write`,
      // \`library_line\`'s text, written whole within the line's bound.
      `within the line's ${chars(MAX_LINE_CHARS)} characters`,
    ];
    // Prose wraps: a phrase may break across lines.
    const prose = logs.replace(/\s+/g, " ");
    expect(told.filter((text) => !prose.includes(text))).toEqual([]);
  });
});

describe("SECURITY.md", () => {
  it("tells a log line's bounds, a request's and analytics' tasks as src/ keeps them", () => {
    const told = [
      `a string keeps ${MAX_CHARS} characters`,
      `a list ${MAX_ITEMS} entries`,
      `a line ${chars(MAX_LINE_CHARS)} characters`,
      `every list is cut to ${LIST_CUTS[1]} entries, then to ${LIST_CUTS[2]}`,
      `Past ${bytes(FULL_LINES_BYTES)} of a request's lines`,
      `a string cut to what ${COMPACT_CHARS} characters write`,
      `The isolate holds ${n(MAX_TASKS)} tasks together`,
      `at most ${MAX_PAGES} pages and ${bytes(MAX_REWRITE_BYTES)} in all`,
      `at most ${MAX_QUERY_CHARS} characters and ${MAX_QUERY_WORDS} words of its query`,
    ];
    const prose = readFileSync(join(ROOT, "SECURITY.md"), "utf8").replace(/\s+/g, " ");
    expect(told.filter((text) => !prose.includes(text))).toEqual([]);
  });
});
