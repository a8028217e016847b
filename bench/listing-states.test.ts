/**
 * What `npm run bench` times is the proxy's listing path, in each state of the
 * tool map (bench/lib/listing-states.ts), with KV answered from memory
 * (bench/lib/memory-kv.ts). No test ran the bench, and its KV stand-in fell
 * behind the settings' checks unseen until a full run refused to start: here
 * each state names a small listing as the bench does, and names it right.
 */
import { describe, expect, it } from "vitest";
import {
  freshText,
  LISTING_STATES,
  type ListingState,
  listingCase,
  renameOnce,
} from "./lib/listing-states";

const STATES = Object.keys(LISTING_STATES) as ListingState[];

/** The names of the tools of a listing answer, as text or as messages. */
function namesIn(answer: unknown): string[] {
  const text = typeof answer === "string" ? answer : JSON.stringify(answer);
  const { result } = JSON.parse(text) as { result: { tools: Array<{ name: string }> } };
  return result.tools.map((tool) => tool.name);
}

describe("npm run bench's listing states", () => {
  it.each(STATES)("%s: names every tool, from the text and from parsed messages", async (state) => {
    const listing = await listingCase(20);
    const first = namesIn(await renameOnce(listing, "first", true, 0));
    expect(first).toHaveLength(20);
    expect(first.every((name) => /^[a-zA-Z0-9_-]{1,64}$/.test(name))).toBe(true);
    for (const [turn, json] of [
      [0, true],
      [1, false],
    ] as const) {
      freshText(listing, state);
      expect(namesIn(await renameOnce(listing, state, json, turn))).toEqual(first);
    }
  });
});
