/**
 * An `x-mcp-header` declaration (protocol 2026-07-28, SEP-2243) that a
 * client refuses is left out of the view (`mcp_header_dropped`): on a
 * property typed other than `string`, `integer` or `boolean` (the origin's
 * `number`, which the SDK 2.x server accepts; a type list, the origin's or
 * one a view made of OpenAPI's `nullable`; none, as pydantic writes an
 * optional), or naming no header. Such a client (the SDK 2.x client, the AI
 * SDK, the OpenAI Agents SDK through the former) leaves the whole tool out of
 * its listing. The proxy writes the `Mcp-Param-*` headers of a call itself,
 * from the origin's schema (protocol/mcp-headers.ts `alignCallHeaders`), so
 * the origin gets those it checks whatever the view says.
 */
import { declarationRefused } from "../../protocol/mcp-headers";
import type { Pass } from "../pass";

const MCP_HEADER = "x-mcp-header";

export const headerDeclarations: Pass = {
  phase: "enter",
  reads: [MCP_HEADER],
  needed: (node) => Object.hasOwn(node, MCP_HEADER) && declarationRefused(node),
  apply: (schema, _at, view) => {
    delete schema[MCP_HEADER];
    view.dropped.add(MCP_HEADER);
    view.applied.add("mcp_header_dropped");
    return schema;
  },
};
