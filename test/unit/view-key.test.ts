/**
 * The key each scope's last listing was shown under (src/toolmap/view-key.ts
 * `ViewKeys`): a listing shown again as it was is not digested again, and the
 * key it is given is always the one `viewKey` digests.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ListedTool } from "../../src/protocol/tools-list";
import { ViewKeys, viewKey } from "../../src/toolmap/view-key";

/** A listing's view as the key reads it: few values of each, so that listings often repeat. */
const shown = fc.record({
  scope: fc.constantFrom("origin a", "origin b"),
  settings: fc.constantFrom("log", "hold"),
  before: fc.constantFrom(undefined, "key of the first page"),
  whole: fc.boolean(),
  searching: fc.boolean(),
  pinned: fc.boolean(),
  tools: fc.array(
    fc.record({
      // A lone surrogate among them: written otherwise in the key.
      name: fc.constantFrom("files.read", "files_read", "\ud800", "\ufffd"),
      decision: fc.constantFrom("shown", "hidden", "held", undefined),
      schemaHash: fc.constantFrom("2.a", "2.b"),
      pin: fc.constantFrom("pin 1", "pin 2", undefined),
    }),
    { maxLength: 4 },
  ),
});

describe("ViewKeys", () => {
  it("gives every listing the key viewKey digests, from memory where it holds what the last did", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(shown, { minLength: 1, maxLength: 12 }), async (listings) => {
        const keys = new ViewKeys();
        for (const listing of listings) {
          const tools: ListedTool[] = listing.tools.map(({ name }) => ({ name }));
          const view = {
            decisions: new Map(
              listing.tools.flatMap((t) => (t.decision ? [[t.name, t.decision]] : [])),
            ),
            entries: new Map(listing.tools.map((t) => [t.name, { schemaHash: t.schemaHash }])),
            whole: listing.whole,
            searching: listing.searching,
          };
          const pins = listing.pinned
            ? new Map(listing.tools.flatMap((t) => (t.pin ? [[t.name, t.pin]] : [])))
            : undefined;
          const { scope, settings, before } = listing;
          expect(await keys.of(scope, settings, before, tools, view, pins)).toBe(
            await viewKey(settings, before, tools, view, pins),
          );
        }
      }),
      { numRuns: 200 },
    );
  });

  // Values `viewKey` writes alike that the memory must not mistake for each other, or the other
  // way round: a first page and a page after one keyed "", a decision or fingerprint missing and
  // one spelled "undefined", pins of tools not listed, names of lone surrogates either way and a
  // pair, repeated names; and the maps of one view changed in place between listings.
  const edgy = fc.record({
    scope: fc.constantFrom("origin a", "origin b"),
    settings: fc.constantFrom("log", "hold", ""),
    before: fc.constantFrom(undefined, "", "key of the first page"),
    whole: fc.boolean(),
    searching: fc.boolean(),
    pinned: fc.boolean(),
    extraPin: fc.boolean(),
    tools: fc.array(
      fc.record({
        name: fc.constantFrom("a", "\ud800", "\udc00", "\ud800\udc00", "\ufffd", "undefined"),
        decision: fc.constantFrom("shown", "undefined", undefined),
        schemaHash: fc.constantFrom("2.a", "undefined", undefined),
        pin: fc.constantFrom("pin 1", "undefined", undefined),
      }),
      { maxLength: 4 },
    ),
  });

  type Edgy = typeof edgy extends fc.Arbitrary<infer T> ? T : never;
  type EdgyTool = Edgy["tools"][number];
  // Listings each the one before with one value changed, so that the memory is asked of listings
  // that differ in that value alone (random listings seldom do).
  const edited = fc
    .tuple(
      edgy,
      fc.array(
        fc.oneof(
          fc.record({
            field: fc.constantFrom(
              "before",
              "settings",
              "whole",
              "searching",
              "pinned",
              "extraPin",
            ),
          }),
          fc.record({
            tool: fc.nat(3),
            key: fc.constantFrom("name", "decision", "schemaHash", "pin"),
            seed: fc.nat(5),
          }),
          fc.record({ swap: fc.nat(3) }),
        ),
        { maxLength: 12 },
      ),
      edgy,
    )
    .map(([first, edits, other]) => {
      const listings: Edgy[] = [first];
      let last = first;
      for (const edit of edits) {
        const next: Edgy = { ...last, tools: last.tools.map((t) => ({ ...t })) };
        if ("field" in edit) Object.assign(next, { [edit.field]: other[edit.field as keyof Edgy] });
        else if ("swap" in edit && next.tools.length > 1) {
          const i = edit.swap % (next.tools.length - 1);
          [next.tools[i], next.tools[i + 1]] = [
            next.tools[i + 1] as EdgyTool,
            next.tools[i] as EdgyTool,
          ];
        } else if ("tool" in edit && next.tools.length > 0) {
          const tool = next.tools[edit.tool % next.tools.length] as EdgyTool;
          const values: Record<string, readonly unknown[]> = {
            name: ["a", "\ud800", "\udc00", "\ud800\udc00", "\ufffd", "undefined"],
            decision: ["shown", "undefined", undefined],
            schemaHash: ["2.a", "undefined", undefined],
            pin: ["pin 1", "undefined", undefined],
          };
          const choices = values[edit.key] as readonly unknown[];
          Object.assign(tool, { [edit.key]: choices[edit.seed % choices.length] });
        }
        listings.push(next);
        last = next;
      }
      return listings;
    });

  it("gives every listing the key viewKey digests, whatever values viewKey writes alike, with maps changed in place", async () => {
    await fc.assert(
      fc.asyncProperty(edited, async (listings) => {
        const keys = new ViewKeys();
        const decisions = new Map<string, string>();
        const entries = new Map<string, { schemaHash: string }>();
        const pins = new Map<string, string>();
        for (const listing of listings) {
          decisions.clear();
          entries.clear();
          pins.clear();
          for (const t of listing.tools) {
            if (t.decision) decisions.set(t.name, t.decision);
            if (t.schemaHash) entries.set(t.name, { schemaHash: t.schemaHash });
            if (t.pin) pins.set(t.name, t.pin);
          }
          if (listing.extraPin) pins.set("not listed", "pin 3");
          const tools: ListedTool[] = listing.tools.map(({ name }) => ({ name }));
          const view = { decisions, entries, whole: listing.whole, searching: listing.searching };
          const pinned = listing.pinned ? pins : undefined;
          const { scope, settings, before } = listing;
          const expected = await viewKey(settings, before, tools, view, pinned);
          expect(await keys.of(scope, settings, before, tools, view, pinned)).toBe(expected);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("gives a listing shown again as it was the key it had", async () => {
    const keys = new ViewKeys();
    const tools: ListedTool[] = [{ name: "files.read" }];
    const view = () => ({
      decisions: new Map([["files.read", "shown"]]),
      entries: new Map([["files.read", { schemaHash: "2.a" }]]),
      whole: true,
      searching: false,
    });
    const first = await keys.of("origin", "log", undefined, tools, view());
    expect(await keys.of("origin", "log", undefined, tools, view())).toBe(first);
    const hidden = { ...view(), decisions: new Map([["files.read", "hidden"]]) };
    expect(await keys.of("origin", "log", undefined, tools, hidden)).not.toBe(first);
  });
});
