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
