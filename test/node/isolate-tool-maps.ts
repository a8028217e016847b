/**
 * Tool maps of one isolate, as the memory tests open them: each request's
 * map over the same `ToolMapMemory` and Miniflare's local KV (local-kv.ts),
 * under a tenant's default settings (and `vars`), for the caller named, as
 * the origin sees them (toolmap/callers.ts). `settle` waits for the KV
 * writes the listings handed off.
 */
import { parseConfig } from "../../src/config";
import { profileOf } from "../../src/schemas/profile";
import { callerNamed } from "../../src/toolmap/callers";
import { ToolMapMemory, type ToolMapScopes } from "../../src/toolmap/isolate-memory";
import { ToolMap } from "../../src/toolmap/tool-map";

export function isolateToolMaps(
  kv: () => KVNamespace,
  scopes: ToolMapScopes,
  vars: Record<string, string> = {},
) {
  const config = parseConfig({
    ORIGIN_URL: "https://origin.example/mcp",
    TOOL_MAP: kv(),
    ...vars,
  } as unknown as Env);
  if (config.kind !== "valid") throw new Error(JSON.stringify(config.problems));
  const memory = new ToolMapMemory();
  const writes: Promise<unknown>[] = [];
  const open = (caller: string) =>
    new ToolMap(
      kv(),
      scopes,
      profileOf("openai"),
      memory,
      (write) => writes.push(write),
      config.config.policy,
      undefined,
      callerNamed(caller),
    );
  const settle = () => Promise.allSettled(writes.splice(0));
  return { memory, open, settle };
}
