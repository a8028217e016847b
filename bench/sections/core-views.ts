/**
 * The core section's schema views and search mode (core.ts runs it): every
 * schema of a 1,000-tool listing viewed under each profile that adapts
 * schemas, as a first listing or a new isolate pays for them, a repeated
 * listing under `gemini` (views from isolate memory) beside the same under
 * `mcp` (no views at all), a branch merge's cost per name, and search mode's
 * index and search over the same tools.
 */
import type { ProfileName } from "../../src/names/profiles";
import { rewriteMessages } from "../../src/rewrite/listing-answer";
import { SCHEMA_PASSES } from "../../src/schemas/profile";
import { schemaView } from "../../src/schemas/view";
import { ToolSearch } from "../../src/toolmap/tool-search";
import { realisticListing } from "../../support/listing";
import { LIST_IDS, listingCase, openToolMap } from "../lib/listing-states";
import { duration, num, type TargetCheck, table } from "../lib/report";
import { type Timed, type Timing, time } from "../lib/timing";

const VIEW_PROFILES = ["openai", "openai-strict", "anthropic", "gemini", "portable"] as const;
const VIEW_SIZE = 1_000;
const SEARCH_QUERY = "list invoices";
/**
 * A query of one-letter words: matched as the start of longer words, each
 * read the postings of every term it starts, and 8 of them most of the index
 * (before 9ff60c9: 4.5 times a query of words at 1,000 tools, 20 at 10,000).
 */
const SHORT_WORDS_QUERY = "s c p d g r t m";

/**
 * A root `anyOf` whose one branch requires `names` names, and an `allOf` of
 * two type lists of as many: each name looked up in a list of them made a
 * view's merge quadratic (2.5 s for 60,000 names before 8ff5d1a).
 */
const wideBranches = (names: number) => {
  const listed = Array.from({ length: names }, (_, i) => `n${i}`);
  return [
    { anyOf: [{ type: "object", required: listed }] },
    { allOf: [{ type: ["object", ...listed] }, { type: ["object", ...listed] }] },
  ];
};
const WIDE_NAMES = [6_000, 60_000] as const;

/**
 * A listing's page after its first, which shows every tool's schema whatever
 * the profile's ceiling: a whole listing of 1,000 tools under `gemini` is
 * search mode, which shows none (docs/search-mode.md).
 */
const LATER_PAGE = { isFirstPage: () => false, readRest: async () => [] };

/** A repeated listing in a warm isolate under `profile`, as a later page: names and views from memory. */
async function warmListing(profile: ProfileName) {
  const { body, storedKv, warmMemory } = await listingCase(VIEW_SIZE, profile);
  const parsed = [JSON.parse(body), JSON.parse(body)];
  let turn = 0;
  return () =>
    rewriteMessages(parsed[turn++ % 2], {
      listIds: LIST_IDS,
      toolMap: openToolMap(storedKv, warmMemory, [], profile),
      wholeListing: LATER_PAGE,
    });
}

/** What the views and search measured: their targets, their part of the section's text, their data. */
export async function measureViews(): Promise<{
  targets: TargetCheck[];
  markdown: string[];
  data: Record<string, unknown>;
}> {
  const schemas = realisticListing(VIEW_SIZE).tools.map((tool) => tool.inputSchema);
  const viewTimes = await time(
    [
      ...VIEW_PROFILES.map(
        (profile): Timed => [
          `view ${profile}`,
          () => {
            for (const schema of schemas) schemaView(schema, SCHEMA_PASSES[profile]);
          },
        ],
      ),
      ["repeated gemini", await warmListing("gemini")],
      ["repeated mcp", await warmListing("mcp")],
    ],
    { time: 600, iterations: 10 },
  );
  const searchable = realisticListing(VIEW_SIZE).tools.map((tool) => ({
    name: tool.name,
    original: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
  }));
  const built = new ToolSearch(searchable);
  built.search(SEARCH_QUERY, 8);
  const searchTimes = await time(
    [
      // The index is built at a listing's first search: build plus that search.
      ["build", () => new ToolSearch(searchable).search(SEARCH_QUERY, 8)],
      ["search", () => built.search(SEARCH_QUERY, 8)],
      ["short words", () => built.search(SHORT_WORDS_QUERY, 8)],
    ],
    { time: 500, iterations: 10 },
  );
  const wideTimes = await time(
    WIDE_NAMES.map((names): Timed => {
      const schemas = wideBranches(names);
      return [
        `${names}`,
        () => {
          for (const schema of schemas) schemaView(schema, SCHEMA_PASSES.openai);
        },
      ];
    }),
    { time: 500, iterations: 5 },
  );
  const targets: TargetCheck[] = [];
  const viewedAt = (name: string) => (viewTimes.get(name) as Timing).p50;
  const firstViews = Math.max(...VIEW_PROFILES.map((profile) => viewedAt(`view ${profile}`)));
  targets.push({
    name: "schema views of a 1,000-tool listing, first listing or new isolate (slowest profile)",
    goal: "< 3 ms CPU",
    measured: duration(firstViews),
    met: firstViews < 3,
  });
  const repeatedViews = viewedAt("repeated gemini") - viewedAt("repeated mcp");
  targets.push({
    name: "schema views of a 1,000-tool listing, repeated in the same isolate (gemini − mcp)",
    goal: "< 1 ms CPU",
    measured: duration(Math.max(0, repeatedViews)),
    met: repeatedViews < 1,
  });
  const searchedIn = (name: string) => (searchTimes.get(name) as Timing).p50;
  targets.push(
    {
      name: `search mode: index a ${num(VIEW_SIZE)}-tool listing, once per listing and isolate`,
      goal: "< 5 ms CPU",
      measured: duration(searchedIn("build")),
      met: searchedIn("build") < 5,
    },
    {
      name: `search mode: one search of ${num(VIEW_SIZE)} tools`,
      goal: "< 0.5 ms CPU",
      measured: duration(searchedIn("search")),
      met: searchedIn("search") < 0.5,
    },
    {
      name: `search mode: a query of 8 one-letter words ÷ one of words, ${num(VIEW_SIZE)} tools`,
      goal: "≤ 2",
      measured: `${num(searchedIn("short words") / searchedIn("search"), 2)} × (${duration(searchedIn("short words"))})`,
      met: searchedIn("short words") / searchedIn("search") <= 2,
    },
  );
  const [fewer, more] = WIDE_NAMES.map(
    (names) => (wideTimes.get(`${names}`) as Timing).p50 / names,
  );
  const wideRatio = (more as number) / (fewer as number);
  targets.push({
    name: `schema views: a branch merge's cost per name it reads, at ${num(WIDE_NAMES[1])} ÷ at ${num(WIDE_NAMES[0])}`,
    goal: "≤ 2",
    measured: `${num(wideRatio, 2)} × (${duration((wideTimes.get(`${WIDE_NAMES[1]}`) as Timing).p50)} for ${num(WIDE_NAMES[1])})`,
    met: wideRatio <= 2,
  });
  return {
    targets,
    markdown: [
      `Schema views of the same ${num(VIEW_SIZE)}-tool listing. A first listing, or the first in a new isolate, views every schema once (\`schemaView\` over all of them, per profile); a repeated listing takes the views from isolate memory, so its cost is the \`gemini\` listing beside the same listing under \`mcp\`, which views nothing (the whole path, renaming only, same isolate; each a later page, which shows every schema where a whole listing of as many tools would be search mode):`,
      "",
      table(
        ["what", "median / p99"],
        [
          ...VIEW_PROFILES.map((profile) => [
            `view ${num(VIEW_SIZE)} schemas, \`${profile}\``,
            `${duration(viewedAt(`view ${profile}`))} / ${duration((viewTimes.get(`view ${profile}`) as Timing).p99)}`,
          ]),
          ["repeated listing, `gemini`", duration(viewedAt("repeated gemini"))],
          ["repeated listing, `mcp`", duration(viewedAt("repeated mcp"))],
        ],
      ),
      "",
      `Search mode over the same ${num(VIEW_SIZE)} tools (\`ToolSearch\`, MiniSearch): the index built with a listing's first search, and one search (\`${SEARCH_QUERY}\`, 8 results) once it is built:`,
      "",
      table(
        ["what", "median / p99"],
        ["build", "search", "short words"].map((name) => [
          name === "build"
            ? "build the index, and search once"
            : name === "search"
              ? "one search"
              : `one search of 8 one-letter words (\`${SHORT_WORDS_QUERY}\`)`,
          `${duration(searchedIn(name))} / ${duration((searchTimes.get(name) as Timing).p99)}`,
        ]),
      ),
      "",
    ],
    data: { views: Object.fromEntries(viewTimes), search: Object.fromEntries(searchTimes) },
  };
}
