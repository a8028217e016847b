/**
 * The listing pin (src/toolmap/listing-pin.ts) decides nothing a digest of
 * every tool would not: over random histories of an origin that lists each
 * caller its own pages (tools named twice, entries that are no tools, tools
 * moved, pages split and joined otherwise, one tool changed, listings
 * repeated as they were) in warm isolates and new ones, what each listing
 * holds, logs and pins is the same as where no listing pin proves anything.
 *
 * Definitions written again in another key order among them: a pin digests
 * the parse as `JSON.stringify` writes it, in its order, in a warm isolate as
 * in a new one. And over the same histories, a warm isolate holds what a new
 * isolate at every listing holds.
 */
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { readListingText } from "../../src/protocol/listing-text";
import { WrittenTool } from "../../src/protocol/written-tool";
import { type ChangeScope, NO_RULES } from "../../src/rules/tool-rules";
import { profileOf } from "../../src/schemas/profile";
import { callerNamed } from "../../src/toolmap/callers";
import { ToolMapMemory, toolMapScopes } from "../../src/toolmap/isolate-memory";
import { ProvenPins } from "../../src/toolmap/listing-pin";
import { decodeMap, KEY_WRITE_MS, mapKey } from "../../src/toolmap/stored-map";
import { ToolMap } from "../../src/toolmap/tool-map";
import { captureLogs } from "../helpers/logs";

/**
 * Each member's texts in twos of one length (0 and 1, 2 and 3, 4 and 5, the
 * last of one definition in two key orders): a tool changed to the other of a
 * two is written as long, where it was.
 */
const SCHEMAS = [
  '{"type":"object","properties":{"path":{"type":"string"}}}',
  '{"type":"object","properties":{"path":{"type":"number"}}}',
  '{"type" : "object"}',
  '{"type" : "string"}',
  '{"properties":{"path":{"type":"string"}},"type":"object"}',
  '{"type":"object","properties":{"path":{"type":"string"}}}',
];
const DESCRIPTIONS = ['"Reads."', '"Wipes."', '"\\u0052eads."', '"\\u0057ipes."'];
const ANNOTATIONS = [
  undefined,
  undefined,
  '{"readOnlyHint":true}',
  '{"readOnlyHint":null}',
  '{"readOnlyHint":true,"openWorldHint":false}',
  '{"openWorldHint":false,"readOnlyHint":true}',
];
const TITLES = [undefined, undefined, '"Read"', '"Wipe"'];
const MEMBERS = [SCHEMAS, DESCRIPTIONS, ANNOTATIONS, TITLES] as const;
const NOT_TOOLS = ["1", '{"name":5}', '{"title":"no name"}'];

const tool = fc.record({
  name: fc.constantFrom("a", "b", "c", "d"),
  /** Each member's text, by its place in `MEMBERS`. */
  members: fc.tuple(...MEMBERS.map((texts) => fc.nat({ max: texts.length - 1 }))),
  // The name written last: the same members, another text.
  nameLast: fc.boolean(),
  spaced: fc.boolean(),
});
type Tool = typeof tool extends fc.Arbitrary<infer T> ? T : never;
const entry = fc.oneof(
  { weight: 9, arbitrary: tool },
  { weight: 1, arbitrary: fc.constantFrom(...NOT_TOOLS) },
);
const pages = fc.array(fc.array(entry, { maxLength: 4 }), { minLength: 1, maxLength: 3 });

/** A listing of one caller: new pages, or an earlier listing's as they were, or with one entry changed, moved or pages cut otherwise. */
const step = fc.record({
  fresh: fc.boolean(),
  who: fc.constantFrom("ann", "bob"),
  listing: fc.oneof(
    { weight: 1, arbitrary: pages.map((listed) => ({ listed })) },
    {
      weight: 2,
      arbitrary: fc.record({
        /** How many listings back: most often the last, whose listing pin the map is likeliest to hold. */
        again: fc.nat({ max: 2 }),
        edit: fc.option(
          fc.record({
            kind: fc.constantFrom("put", "flip", "move", "cut"),
            page: fc.nat(),
            at: fc.nat(),
            to: fc.nat(),
            entry,
          }),
          { freq: 2 },
        ),
      }),
    },
  ),
});
type Step = typeof step extends fc.Arbitrary<infer T> ? T : never;
type Entry = Tool | string;

/**
 * Three tools listed, and listed again as they were by a new isolate: the listing pin proves
 * their pins, and spares their digests. The property's first history, so that every run of it
 * spares some: random histories spared any in 9 to 30 of 100 (30 seeds a scope, 16 on average
 * for the scope of schemas), and a run of 100 that spares none, one in some 40 million
 * (0.84^100), is possible.
 */
const LISTED_AGAIN: Step[] = [
  {
    fresh: false,
    who: "ann",
    listing: {
      listed: [
        (["a", "b", "c"] as const).map((name, i) => ({
          name,
          members: [i, i, i + 2, i],
          nameLast: false,
          spaced: false,
        })),
      ],
    },
  },
  { fresh: true, who: "ann", listing: { again: 0, edit: null } },
];

function toolText({ name, members, nameLast }: Tool) {
  const [schema, description, annotations, title] = MEMBERS.map(
    (texts, i) => texts[members[i] ?? 0],
  );
  const written = [
    `"inputSchema":${schema}`,
    `"description":${description}`,
    ...(annotations ? [`"annotations":${annotations}`] : []),
    ...(title ? [`"title":${title}`] : []),
  ];
  const named = `"name":${JSON.stringify(name)}`;
  return `{${(nameLast ? [...written, named] : [named, ...written]).join(",")}}`;
}

const entryText = (item: Entry) =>
  typeof item === "string" ? item : `${item.spaced ? "\n " : ""}${toolText(item)}`;

function pageTexts(listed: Entry[][]): string[] {
  return listed.map((page, i) => {
    const cursor = i === listed.length - 1 ? "" : ',"nextCursor":"n"';
    return `{"jsonrpc":"2.0","id":1,"result":{"tools":[${page.map(entryText).join(",")}]${cursor}}}`;
  });
}

/**
 * Each step's pages. An edit of an earlier step's: `put` an entry in place of
 * another, `flip` one member of a tool to the other text of its two (the tool
 * as long, where it was), `move` an entry within its page, `cut` the entries
 * into two pages elsewhere.
 */
function listingsOf(steps: Step[]): Entry[][][] {
  const listings: Entry[][][] = [];
  for (const { listing } of steps) {
    if ("listed" in listing || listings.length === 0) {
      listings.push("listed" in listing ? listing.listed : [[]]);
      continue;
    }
    const earlier = listings[Math.max(0, listings.length - 1 - listing.again)] as Entry[][];
    const edited = earlier.map((page) => [...page]);
    const { edit } = listing;
    const page = edit && (edited[edit.page % edited.length] as Entry[]);
    if (edit?.kind === "cut") {
      const all = edited.flat();
      const cut = edit.to % (all.length + 1);
      listings.push([all.slice(0, cut), all.slice(cut)]);
      continue;
    }
    if (edit && page && page.length > 0) {
      const at = edit.at % page.length;
      const item = page[at] as Entry;
      if (edit.kind === "put") page[at] = edit.entry;
      if (edit.kind === "flip" && typeof item === "object") {
        const member = edit.to % MEMBERS.length;
        page[at] = { ...item, members: item.members.map((t, i) => (i === member ? t ^ 1 : t)) };
      }
      if (edit.kind === "move") page.splice(edit.to % page.length, 0, ...page.splice(at, 1));
    }
    listings.push(edited);
  }
  return listings;
}

/** What each listing of a history holds, logs and leaves in the map; `proving`: false where no listing pin proves anything. */
async function history(steps: Step[], scope: ChangeScope, proving: boolean) {
  const spies = proving
    ? []
    : [
        vi.spyOn(ProvenPins.prototype, "of").mockReturnValue(undefined),
        vi.spyOn(ProvenPins.prototype, "schemaFingerprints").mockResolvedValue(undefined),
      ];
  const scopes = await toolMapScopes(
    new URL(`https://origin.example/mcp?map=${crypto.randomUUID()}`),
    profileOf("openai").names,
  );
  const writes: Promise<unknown>[] = [];
  const outcomes: unknown[] = [];
  const digests: number[] = [];
  let memory = new ToolMapMemory();
  const listings = listingsOf(steps);
  // A second between listings, on the clock the map reads. An isolate writes a key of KV at most
  // once a second (KEY_WRITE_MS): in real time, each listing of a warm isolate after one that
  // wrote waited that second out, 95% of the property's time (the four took 274 s on two loaded
  // cores, the slowest 94 s of its 120). What the isolate writes after the wait is this
  // property's, the wait is kv-write-rate.test.ts's. Six listings a second apart keep the map's
  // memory fresh (FRESH_MS), as real time did but on a machine slow enough: at two seeds a scope,
  // every run's outcomes and digest counts were the same either way.
  vi.useFakeTimers({ toFake: ["Date"] });
  try {
    for (const [i, { fresh, who }] of steps.entries()) {
      vi.setSystemTime(Date.now() + KEY_WRITE_MS);
      if (fresh) memory = new ToolMapMemory();
      const map = new ToolMap(
        env.TOOL_MAP,
        scopes,
        profileOf("openai"),
        memory,
        (write) => writes.push(write),
        { rules: NO_RULES, changes: "hold", scope },
        undefined,
        callerNamed(who),
      );
      const tools = pageTexts(listings[i] as Entry[][]).flatMap((text) => {
        const read = readListingText(text, map.writtenBefore());
        return (read?.elements ?? []).filter((e): e is WrittenTool => e instanceof WrittenTool);
      });
      const logs = captureLogs();
      const digest = vi.spyOn(crypto.subtle, "digest");
      const listing = await map.nameListing(tools);
      await Promise.all(writes.splice(0));
      digests.push(digest.mock.calls.length);
      digest.mockRestore();
      const events = logs
        .lines()
        .filter(({ event }) => event.startsWith("tool_definition"))
        .map(({ event, tool, from, to }) => ({ event, tool, from, to }));
      logs.restore();
      const stored = decodeMap((await env.TOOL_MAP.get(mapKey(scopes.origin))) ?? "");
      outcomes.push({
        hidden: [...listing.hidden],
        events,
        pins: [...(stored?.tools ?? [])].map(([original, { pin }]) => [original, pin]),
        held: [...(stored?.held ?? [])],
      });
    }
  } finally {
    vi.useRealTimers();
  }
  for (const spy of spies) spy.mockRestore();
  return { outcomes, digests };
}

describe("the listing pin, against a digest of every tool", () => {
  for (const scope of ["definition", "schema"] as const) {
    it(`holds, logs and pins alike, and spares digests (${scope})`, async () => {
      let spared = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 2, maxLength: 6 }), async (steps) => {
          const proven = await history(steps, scope, true);
          const digested = await history(steps, scope, false);
          expect(proven.outcomes).toEqual(digested.outcomes);
          spared += proven.digests.filter((count, i) => count < (digested.digests[i] ?? 0)).length;
        }),
        { numRuns: 100, examples: [[LISTED_AGAIN]] },
      );
      // Listings the listing pin proved, sparing digests: the property is not only of those it could not.
      expect(spared).toBeGreaterThan(0);
    }, 60_000);
  }
});

describe("a warm isolate, against a new one at every listing", () => {
  // What a listing holds is KV's to decide, once the writes before it landed: an isolate that
  // listed the origin before decides as a new one would (a definition written again in another key
  // order kept its pin in the first, and was a change in the second).
  for (const scope of ["definition", "schema"] as const) {
    it(`holds alike (${scope})`, async () => {
      let holding = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 2, maxLength: 6 }), async (steps) => {
          const warm = await history(steps, scope, true);
          const fresh = await history(
            steps.map((taken) => ({ ...taken, fresh: true })),
            scope,
            true,
          );
          const held = ({ outcomes }: typeof warm) =>
            outcomes.map((outcome) => (outcome as { hidden: string[] }).hidden);
          expect(held(warm)).toEqual(held(fresh));
          if (held(warm).some((hidden) => hidden.length > 0)) holding++;
        }),
        { numRuns: 100 },
      );
      // Not vacuous: the histories held a tool somewhere in 18 to 34 of 100 runs across 30 seeds a
      // scope (a standard deviation of 3), the floor some five and a half below their mean.
      expect(holding).toBeGreaterThan(8);
    }, 60_000);
  }
});
