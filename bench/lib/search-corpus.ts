/**
 * The search benchmark's data (bench/data/): the tool listings of real MCP
 * servers, served as one origin's listing, and the labelled queries.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Profile } from "../../src/schemas/profile";
import { schemaView } from "../../src/schemas/view";
import type { SearchableTool } from "../../src/toolmap/search-terms";

export interface ListedServer {
  key: string;
  package: string;
  version: string;
  license: string;
  tools: Tool[];
}

export interface LabelledQuery {
  query: string;
  server: string;
  /** The tool that does what the query asks, by its name in its server's listing. */
  tool: string;
  /** Another tool of the same server that does it as well. */
  also?: string[];
  half: "tune" | "held-out";
}

const read = <T>(file: string): T =>
  JSON.parse(
    readFileSync(fileURLToPath(new URL(`../data/${file}`, import.meta.url).href), "utf8"),
  ) as T;

export const SERVERS = read<{ servers: ListedServer[] }>("search-listings.json").servers;
export const QUERIES = read<{ queries: LabelledQuery[] }>("search-queries.json").queries;

/**
 * The servers' tools as one origin lists them (a gateway in front of all of
 * them): a name a server before it took gets the server's key in front, as
 * gateways name them apart. Each tool as search mode holds it: under
 * `profile`'s view of its schema. `copies` lists every tool that many times
 * (the second copy's names end in `_2`, …), for a listing of a given size.
 */
export function originListing(
  profile: Profile,
  copies = 1,
): { tools: SearchableTool[]; originalOf: (server: string, tool: string) => string } {
  const originals = new Map<string, string>();
  const taken = new Set<string>();
  const tools: SearchableTool[] = [];
  for (let copy = 1; copy <= copies; copy++) {
    for (const server of SERVERS) {
      for (const tool of server.tools) {
        const own = taken.has(tool.name) ? `${server.key}_${tool.name}` : tool.name;
        const original = copy === 1 ? own : `${own}_${copy}`;
        if (copy === 1) originals.set(`${server.key}\n${tool.name}`, original);
        taken.add(original);
        tools.push({
          name: original,
          original,
          ...(tool.title === undefined ? {} : { title: tool.title }),
          ...(tool.description === undefined ? {} : { description: tool.description }),
          inputSchema: schemaView(tool.inputSchema, profile.schemas).schema,
        });
      }
    }
  }
  const originalOf = (server: string, tool: string) => {
    const original = originals.get(`${server}\n${tool}`);
    if (original === undefined) throw new Error(`no tool ${tool} of ${server} in the listings`);
    return original;
  };
  return { tools, originalOf };
}
