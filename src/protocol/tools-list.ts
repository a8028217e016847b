/**
 * The `tools/list` result as MCP defines it, read loosely: only `tools` and
 * each tool's `name` and `inputSchema` matter to the proxy; every other field
 * is carried, never required.
 */
import { foldedKey, isPlainObject } from "../json";
import type { Span } from "../json-spans";

/**
 * A tool as a listing describes it: the members of MCP's the proxy reads,
 * and where the proxy read the listing from its text (listing-text.ts
 * `WrittenTool`), members of its own that say where that text holds what.
 * Only that reading and `listedTool` make one: an origin's parsed tool is
 * never one, or a member it wrote beside MCP's (`schemaJson`) would be taken
 * for the proxy's own, and the schema a pin digests and a call is repaired
 * against would be a text the origin chose, not its `inputSchema`.
 */
export interface ListedTool {
  name: string;
  title?: unknown;
  description?: unknown;
  inputSchema?: unknown;
  annotations?: unknown;
  outputSchema?: unknown;
  icons?: unknown;
  _meta?: unknown;
  execution?: unknown;
  /**
   * Where the listing's text holds `inputSchema` written as `JSON.stringify`
   * writes it (listing-text.ts): fingerprinted there, without writing it again.
   */
  schemaJson?: { text: string; span: Span };
  /** Where the listing's text holds the whole tool, when it was read from its text. */
  written?: { text: string; span: Span };
  /**
   * Read from its text: `false` when what its definition pin covers writes
   * a key twice (listing-text.ts), so it is written from the proxy's reading.
   */
  readonly readsOneWay?: boolean;
}

export type ToolsListResult = { tools: unknown[] } & Record<string, unknown>;

/** An entry of `tools` as the origin wrote it, parsed: any member, any value, but its `name`. */
export type NamedEntry = { name: string } & Record<string, unknown>;

/** An entry of `tools` the proxy takes for a tool: an object with a string `name`. */
export const isListedTool = (entry: unknown): entry is NamedEntry =>
  isPlainObject(entry) && typeof entry.name === "string";

/**
 * The tool a parsed entry describes: a copy of the members MCP names that the
 * proxy reads, and nothing else the origin wrote. The entry itself is what the
 * client is sent (rewrite/tools-list.ts `renamedTool`), as it came.
 */
export function listedTool(entry: NamedEntry): ListedTool {
  const { name, title, description, inputSchema, annotations, outputSchema } = entry;
  const { icons, _meta, execution } = entry;
  return {
    name,
    title,
    description,
    inputSchema,
    annotations,
    outputSchema,
    icons,
    _meta,
    execution,
  };
}

export function isToolsListResult(result: unknown): result is ToolsListResult {
  return isPlainObject(result) && Array.isArray(result.tools);
}

/**
 * A result that is a `tools/list` result, where the request is out of view
 * (events replayed on a resumed stream): a `tools` array with a tool in it
 * (`isListedTool`), and no `content`, which a call's result has (the one other
 * result an origin might give a `tools` member). Read as the answer to a
 * listing request is read, whatever else its entries hold: requiring every
 * tool's `inputSchema`, a listing with one tool that leaves it out (lenient
 * origins do, for a tool without arguments) was replayed with the origin's
 * names, and under rules that hide tools ended the stream.
 */
export function looksLikeToolsListResult(result: unknown): result is ToolsListResult {
  return isToolsListResult(result) && !("content" in result) && result.tools.some(isListedTool);
}

/** The tools of a parsed result that have a name to work with (`listedTool`). */
export function namedTools(result: ToolsListResult): ListedTool[] {
  const tools: ListedTool[] = [];
  for (const entry of result.tools) if (isListedTool(entry)) tools.push(listedTool(entry));
  return tools;
}

/**
 * Whether this is the first tool of its name in a listing (`seen`: the names
 * before it, added to as it goes). MCP names each tool once; where an origin
 * names one twice, only the first is the tool: the one the proxy names,
 * views and pins, and the only one it lists. A second copy beside it could
 * show the model a definition no pin covers.
 */
export function firstOfItsName(tool: { name: string }, seen: Set<string>): boolean {
  if (seen.has(tool.name)) return false;
  seen.add(tool.name);
  return true;
}

/** Whether a `tools/list` request asks for a page after the first (it carries a cursor). */
export function asksForLaterPage(request: unknown): boolean {
  return (
    isPlainObject(request) &&
    isPlainObject(request.params) &&
    request.params.cursor !== undefined &&
    request.params.cursor !== null
  );
}

/** The members MCP names at one level of a `tools/list` answer, as written and as a lenient reader reads them. */
export interface Members {
  written: ReadonlySet<string>;
  folded: ReadonlySet<string>;
}

const members = (...names: string[]): Members => ({
  written: new Set(names),
  folded: new Set(names.map(foldedKey)),
});

/** The members of a JSON-RPC message, of a `tools/list` result, and of a tool. */
export const LISTING_MEMBERS = {
  message: members("jsonrpc", "id", "method", "params", "result", "error"),
  result: members("tools", "nextCursor", "_meta", "resultType"),
  tool: members(
    ...["name", "title", "description", "inputSchema", "outputSchema", "annotations"],
    ...["icons", "execution", "_meta"],
  ),
};

/**
 * The first of `keys` that a lenient reader (json.ts `foldedKey`: Go's
 * `encoding/json`, which mcp-go reads messages with) takes for one of
 * `members` though it is not written as it: `Tools`, `toolſ`. Such a reader
 * keeps the last of the two, so it would read a member the proxy never read.
 */
export function misspelledKey(keys: Iterable<string>, members: Members) {
  for (const key of keys) if (misspells(key, members)) return key;
  return undefined;
}

/** Whether a lenient reader takes `key` for one of `members` though it is not written as it (`misspelledKey`). */
export const misspells = (key: string, { written, folded }: Members) =>
  !written.has(key) && folded.has(foldedKey(key));

/**
 * The first member of a message, of its result or of a tool in it, that a
 * lenient reader takes for another (`misspelledKey`); `undefined` when every
 * reader reads the members the proxy reads.
 */
export function misspelledMember(message: unknown): string | undefined {
  if (!isPlainObject(message)) return undefined;
  const { result } = message;
  return (
    misspelledKey(Object.keys(message), LISTING_MEMBERS.message) ??
    (isPlainObject(result) ? misspelledInResult(result) : undefined)
  );
}

function misspelledInResult(result: Record<string, unknown>): string | undefined {
  const misspelled = misspelledKey(Object.keys(result), LISTING_MEMBERS.result);
  if (misspelled !== undefined || !Array.isArray(result.tools)) return misspelled;
  for (const tool of result.tools) {
    const key = isPlainObject(tool)
      ? misspelledKey(Object.keys(tool), LISTING_MEMBERS.tool)
      : undefined;
    if (key !== undefined) return key;
  }
  return undefined;
}
