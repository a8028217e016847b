/**
 * The catalog origin (test/fixtures/node/catalog-origin.ts) as an origin that
 * changes a tool's definition under the proxy's feet (a "rug pull", for
 * `TOOL_CHANGES`, docs/rules.md): its first tool, `read_text_file`.
 */
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import type { LogLine } from "./logs";
import { CATALOG_ORIGIN } from "./proxy";

/** The tool `change()` changes. */
export const CHANGING_TOOL = "read_text_file";

export interface ChangingOriginOptions {
  /** How many tools it lists (5). */
  tools?: number;
  /** Every tool has a title, and the change is to the first one's title. */
  titled?: boolean;
  /** The first tool is listed twice, as MCP forbids: as it changes, then as it was first. */
  twice?: boolean;
  /** Every listing says it may be cached for a minute, with this scope (2026-07-28). */
  cacheScope?: "public" | "private";
}

/**
 * The catalog's first `tools` tools, in front of a map of their own;
 * `change()` rewrites the first's description (its title when `titled`).
 */
export function changingOrigin({
  tools = 5,
  titled = false,
  twice = false,
  cacheScope,
}: ChangingOriginOptions = {}) {
  const map = crypto.randomUUID();
  const query = `&tools=${tools}${titled ? "&titled" : ""}${twice ? "&twice" : ""}${cacheScope ? `&cache_scope=${cacheScope}` : ""}`;
  return {
    origin: `${CATALOG_ORIGIN}/mcp?map=${map}${query}`,
    change: async () => {
      const response = await fetch(`${CATALOG_ORIGIN}/__change?map=${map}`, { method: "POST" });
      if (response.status !== 204) throw new Error(`__change: ${response.status}`);
    },
  };
}

/** `fingerprint32("read_text_file")`, as every release since 73542ce writes it in an accept key. */
const CHANGING_TOOL_FINGERPRINT = "3lx12o";

/**
 * Does what the command a `tool_definition_changed` line under `hold` gives
 * does (`npm run holds -- accept TOOL --pin PIN --local` under `wrangler dev`):
 * writes the accept key, spelled out as the release wrote it: the origin's
 * scope (SHA-256 of its URL, first 8 bytes in hex), the new pin, and the
 * fingerprint of the tool's name (docs/tool-map.md).
 */
export async function runAcceptCommand(held: LogLine | undefined, origin: string): Promise<void> {
  expect(held?.accept).toBe(
    `npm run holds -- accept ${CHANGING_TOOL} --pin ${String(held?.to)} --local`,
  );
  expect(held?.to).toMatch(/^[\w-]{43}\/2\.[0-9a-z]+\/[0-9a-z]+\/[-0-9a-z]+\/-\/-\/-$/);
  const scope = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(new URL(origin).href)),
  ).subarray(0, 8);
  const hex = [...scope].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  const key = `v2:${hex}:accept:${String(held?.to)}/${CHANGING_TOOL_FINGERPRINT}`;
  await env.TOOL_MAP.put(key, CHANGING_TOOL);
}
