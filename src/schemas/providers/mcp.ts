/** Clients that pass MCP listings on as they are: no pass, the view is the schema. */
import type { ViewPasses } from "../pass";

export const MCP: ViewPasses = { root: [], nodes: [], viewsDefinitions: true, textNull: "type" };
