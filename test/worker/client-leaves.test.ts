/**
 * A client that goes away while the origin sends nothing: the proxy closes
 * its connection to the origin then, whatever reads the origin's stream (the
 * runtime alone, a pump that rewrites a listing, a watch on the GET stream),
 * not at the origin's next chunk. The runtime says so with the request's
 * signal (`enable_request_signal`), which the tests abort as it does. The
 * origin is the gateway's `/held/mcp`: one event, then nothing.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { ACCEPT_BOTH, rpc } from "../helpers/mcp";
import {
  GATEWAY_ORIGIN,
  heldByOrigin,
  heldOnceClosed,
  leavingClient,
  newTrace,
  PROXY_URL,
  viaProxy,
} from "../helpers/proxy";

const CALL = rpc(1, "tools/call", { name: "work", arguments: {}, _meta: { progressToken: "p-1" } });
const PROGRESS = "notifications/progress";

describe("a client that goes away while the origin sends nothing", () => {
  it.each([
    ["a call's answer, which the runtime passes alone", CALL, "", {}, PROGRESS],
    [
      "a listing's event stream before the listing came",
      rpc(1, "tools/list"),
      "held",
      {},
      PROGRESS,
    ],
    ["a listing's event stream after it", rpc(1, "tools/list"), "answered", {}, '"tools"'],
    ["the GET stream, watched for list_changed", undefined, "", {}, PROGRESS],
    [
      "a resumed GET stream, read for the listings it replays",
      undefined,
      "",
      { "last-event-id": "1" },
      PROGRESS,
    ],
  ] as const)("%s: the origin's connection is closed", async (_, body, listing, headers, seen) => {
    const proxy = viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/held/mcp` }, { app: createApp() });
    const trace = newTrace();
    const query = `?trace=${trace}${listing && `&listing=${listing}`}`;
    const client = await leavingClient(proxy, `${PROXY_URL}${query}`, body, headers);
    expect(client.first).toContain(seen);
    expect(await heldByOrigin(trace)).toEqual({ opened: 1, closed: 0 });
    await client.goAway();
    expect(await heldOnceClosed(trace)).toEqual({ opened: 1, closed: 1 });
  });
});

describe("a client that goes away while the proxy lists the origin for its call", () => {
  it("has the proxy's own listing closed, which the origin holds open without an answer, and the call never sent", async () => {
    // `work` is a name this new isolate does not know: the proxy lists the origin to resolve it,
    // and the origin's listing is one progress event and then nothing, no answer, no end.
    const proxy = viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/held/mcp` }, { app: createApp() });
    const trace = newTrace();
    const left = new AbortController();
    const answer = proxy(`${PROXY_URL}?trace=${trace}&listing=held`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: ACCEPT_BOTH },
      body: JSON.stringify(CALL),
      signal: left.signal,
    });
    let held = await heldByOrigin(trace);
    for (let look = 0; look < 100 && held.opened === 0; look++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      held = await heldByOrigin(trace);
    }
    expect(held).toEqual({ opened: 1, closed: 0 });
    left.abort();
    // Once the proxy is done with the request: the call was never sent, for no one to read.
    await answer;
    expect(await heldOnceClosed(trace)).toEqual({ opened: 1, closed: 1 });
  });
});
