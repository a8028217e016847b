/**
 * Which callers draw on the unproven sources' share of the isolate's re-lists
 * (profile-names.ts `MAX_UNPROVEN_RELISTS`): made-up credentials, which relay
 * mode cannot tell from real ones, do; a user broker or gate mode signed in,
 * whom no client can make up, does not, though the origin has listed none of
 * them in this isolate yet (a new isolate, after a deploy).
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { profileOf } from "../../src/schemas/profile";
import { callerOf } from "../../src/toolmap/callers";
import { ToolMapMemory, toolMapScopes } from "../../src/toolmap/isolate-memory";
import { MAX_UNPROVEN_RELISTS } from "../../src/toolmap/profile-names";
import { ToolMap } from "../../src/toolmap/tool-map";
import type { OriginCredentials } from "../../src/transport/headers";
import { freshOrigin } from "../helpers/proxy";

const openai = profileOf("openai");

/** `MAX_UNPROVEN_RELISTS + 1` callers, each of its own source, new to one isolate: which may be listed. */
async function relistsOf(
  credentials: (i: number) => OriginCredentials,
  headers?: (i: number) => HeadersInit,
) {
  const origin = new URL(freshOrigin());
  const memory = new ToolMapMemory();
  const scopes = await toolMapScopes(origin, openai.names);
  const taken: boolean[] = [];
  for (let i = 0; i <= MAX_UNPROVEN_RELISTS; i++) {
    const caller = callerOf(new Headers(headers?.(i)), origin, credentials(i), origin);
    const map = new ToolMap(
      env.TOOL_MAP,
      scopes,
      openai,
      memory,
      () => {},
      undefined,
      undefined,
      caller,
    );
    taken.push(await map.takeRelist());
  }
  return taken;
}

describe("a new isolate's re-lists", () => {
  it("are shared by made-up credentials: the one past the unproven share is refused", async () => {
    const taken = await relistsOf(
      () => ({ kind: "client" }),
      (i) => ({ authorization: `Bearer made-up-${i}` }),
    );
    expect(taken).toEqual([...Array(MAX_UNPROVEN_RELISTS).fill(true), false]);
  });

  it("are each signed-in user's own, in broker mode (the grant's user) and gate mode (who signed in)", async () => {
    const broker = await relistsOf((i) => ({
      kind: "proxy",
      headers: [["authorization", `Bearer origin-token-${i}`]],
      passHeaders: new Set(),
      caller: `grant-user-${i}`,
    }));
    const gate = await relistsOf((i) => ({
      kind: "proxy",
      headers: [["x-origin-key", "shared"]],
      passHeaders: new Set(),
      sameForEveryCaller: true,
      user: `https://idp.example\nu-${i}`,
    }));
    expect({ broker, gate }).toEqual({
      broker: Array(MAX_UNPROVEN_RELISTS + 1).fill(true),
      gate: Array(MAX_UNPROVEN_RELISTS + 1).fill(true),
    });
  });
});
