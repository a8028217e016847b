/**
 * The catalog origin (test/fixtures/node/catalog-origin.ts) as an origin that
 * changes a tool's definition under the proxy's feet (a "rug pull", for
 * `TOOL_CHANGES`, docs/rules.md): its first tool, `read_text_file`.
 */
import { env } from "cloudflare:workers";
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
}

/**
 * The catalog's first `tools` tools, in front of a map of their own;
 * `change()` rewrites the first's description (its title when `titled`).
 */
export function changingOrigin({
  tools = 5,
  titled = false,
  twice = false,
}: ChangingOriginOptions = {}) {
  const map = crypto.randomUUID();
  const query = `&tools=${tools}${titled ? "&titled" : ""}${twice ? "&twice" : ""}`;
  return {
    origin: `${CATALOG_ORIGIN}/mcp?map=${map}${query}`,
    change: async () => {
      const response = await fetch(`${CATALOG_ORIGIN}/__change?map=${map}`, { method: "POST" });
      if (response.status !== 204) throw new Error(`__change: ${response.status}`);
    },
  };
}

/**
 * Runs the command a `tool_definition_changed` line under `hold` gives
 * (`wrangler kv key put --remote --binding TOOL_MAP <key> <original>`), as
 * the operator pastes it: the held change is accepted.
 */
export async function runAcceptCommand(held: LogLine | undefined): Promise<void> {
  const command = /kv key put --remote --binding TOOL_MAP (".*?") (".*?")$/.exec(
    String(held?.accept),
  );
  if (!command) throw new Error(`no accept command in ${JSON.stringify(held)}`);
  await env.TOOL_MAP.put(JSON.parse(command[1] as string), JSON.parse(command[2] as string));
}
