/**
 * The core section's listings (lib/listing-states.ts) in workerd, where the
 * proxy runs: `GET /?state=<state>&size=<tools>&runs=<n>` renames the
 * realistic listing `n` times in that state of the map, text to text, each
 * from a text decoded afresh from the body's bytes; `state=floor` puts the
 * same text through `JSON.parse` and `JSON.stringify` instead. The section
 * reads the CPU the workerd process spent (sections/listing-cpu.ts): what
 * the runtime's own JSON, WebCrypto and garbage collector cost, which Node
 * only approximates.
 */
// wrangler.toml binds the Durable Object, so every bundle made with it exports the class.
export { SignInBudget } from "../../src/auth/sign-in-budget-object";

import {
  freshText,
  LISTING_STATES,
  type ListingCase,
  type ListingState,
  listingCase,
  renameOnce,
} from "../lib/listing-states";

const cases = new Map<number, Promise<ListingCase>>();
let turn = 0;

const isState = (state: string): state is ListingState => Object.hasOwn(LISTING_STATES, state);

async function listOnce(c: ListingCase, state: ListingState | "floor"): Promise<number> {
  if (state === "floor") {
    freshText(c, "first");
    return JSON.stringify(JSON.parse(c.text)).length;
  }
  freshText(c, state);
  const answer = await renameOnce(c, state, true, turn++);
  return typeof answer === "string" ? answer.length : 0;
}

export default {
  async fetch(request: Request): Promise<Response> {
    const query = new URL(request.url).searchParams;
    const state = query.get("state") ?? "";
    const size = Number(query.get("size"));
    const runs = Number(query.get("runs"));
    if ((state !== "floor" && !isState(state)) || !(size > 0) || !(runs > 0)) {
      return new Response("state, size and runs, please", { status: 400 });
    }
    let c = cases.get(size);
    if (!c) {
      c = listingCase(size);
      cases.set(size, c);
    }
    const listing = await c;
    let written = 0;
    for (let run = 0; run < runs; run++) written += await listOnce(listing, state);
    return new Response(String(written));
  },
} satisfies ExportedHandler;
