/**
 * An `x-mcp-header` declaration (protocol 2026-07-28, SEP-2243) that a
 * client refuses is left out of the view (`mcp_header_dropped`), as the SDK
 * 2.x client's `scanXMcpHeaderDeclarations` refuses one:
 * - by what the node says: on a property typed other than `string`,
 *   `integer` or `boolean` (the origin's `number`, which the SDK 2.x server
 *   accepts; a type list, the origin's or one a view made of OpenAPI's
 *   `nullable`; none, as pydantic writes an optional), or naming no header;
 * - by where it is: anywhere but a property reached from the root through
 *   `properties` alone (`At.byProperties`: not the root, nor under `items`,
 *   an `anyOf`, `$defs`, …);
 * - by a name the view already declares, case aside: the first kept, which
 *   the client then takes.
 * Such a client (the SDK 2.x client, the AI SDK, the OpenAI Agents SDK
 * through the former) leaves the whole tool out of its listing. The proxy
 * writes the `Mcp-Param-*` headers of a call itself, from the origin's
 * schema (protocol/mcp-headers.ts `alignCallHeaders`), so the origin gets
 * those it checks whatever the view says.
 */
import { declarationRefused } from "../../protocol/mcp-headers";
import type { Pass, ViewContext } from "../pass";

const MCP_HEADER = "x-mcp-header";

/** The header names each view declares so far, lower-cased, in the walk's order: the client's. */
const declared = new WeakMap<ViewContext, Set<string>>();

/** Whether the view keeps the declaration of `header` on a node a client takes one on. */
function firstOf(header: string, view: ViewContext): boolean {
  let names = declared.get(view);
  if (names === undefined) {
    names = new Set();
    declared.set(view, names);
  }
  const name = header.toLowerCase();
  if (names.has(name)) return false;
  names.add(name);
  return true;
}

export const headerDeclarations: Pass = {
  phase: "enter",
  reads: [MCP_HEADER],
  // Every declaration: whether a client takes it depends on those the view declared before it.
  needed: (node) => Object.hasOwn(node, MCP_HEADER),
  apply: (schema, at, view) => {
    if (
      at.byProperties &&
      !declarationRefused(schema) &&
      firstOf(schema[MCP_HEADER] as string, view)
    ) {
      return schema;
    }
    delete schema[MCP_HEADER];
    view.dropped.add(MCP_HEADER);
    view.applied.add("mcp_header_dropped");
    return schema;
  },
};
