/** What a listing through the proxy must keep of the origin's, whatever profile renamed it. */
import { expect } from "vitest";
import { PROVIDER_RULES } from "./provider-rules";

interface ListedTool {
  name: string;
  inputSchema?: unknown;
  [field: string]: unknown;
}

/**
 * `tools` against the origin's own listing: the same tools in the same order,
 * every field but the name as the origin sent it; an `inputSchema` the
 * profile's provider accepts unchanged, one it would refuse replaced by one it accepts.
 */
export function expectOriginsToolsAsViewed(
  tools: readonly ListedTool[],
  originTools: readonly ListedTool[],
  profile = "openai",
): void {
  const accepted = PROVIDER_RULES[profile] ?? (() => []);
  expect(tools).toHaveLength(originTools.length);
  for (const [index, tool] of tools.entries()) {
    const { name: _name, inputSchema, ...rest } = tool;
    const { name: _original, inputSchema: originSchema, ...originRest } = originTools[index] ?? {};
    expect(rest).toEqual(originRest);
    if (accepted(originSchema).length === 0) expect(inputSchema).toEqual(originSchema);
    else expect(accepted(inputSchema), tool.name).toEqual([]);
  }
}
