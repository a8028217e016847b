/**
 * A `tools/list` answer read from its text (json-spans.ts) rather than
 * parsed whole: the message's id, its result's members, and for each tool its
 * span and what the proxy reads of it (`name`, `title`, `description`,
 * `annotations`, `inputSchema`), each parsed from its own span. Nothing else
 * is parsed; rewrite/listing-splice.ts copies it as it came.
 *
 * Read only where there is one reading: a single message whose text holds
 * nothing after it, no key written twice in it, its result or a tool, every
 * member read a JSON value. Anything else is `undefined`, and the caller
 * parses the whole text as before.
 */
import {
  isStringified,
  type ObjectText,
  readArray,
  readObject,
  type Span,
  skipSpace,
  valueEnd,
  type Written,
} from "../json-spans";
import type { ListedTool } from "./tools-list";

/** One tool of the listing, as written. */
export interface ToolText {
  span: Span;
  members: ReadonlyMap<string, Span>;
  tool: ListedTool;
}

export interface ListingText {
  id: unknown;
  idSpan: Span;
  resultSpan: Span;
  resultMembers: ReadonlyMap<string, Span>;
  /** The `tools` array. */
  toolsSpan: Span;
  /** Its elements in order: a tool, or the span of one without a string `name` (carried as it came). */
  elements: Array<ToolText | Span>;
}

/** The members of a tool the proxy reads, besides `name` and `inputSchema`. */
const READ = ["title", "description", "annotations"] as const;

const slice = (text: string, [start, end]: Span) => text.slice(start, end);

/** The value written at `span`; `undefined` when it is not JSON. */
function parseSpan(text: string, span: Span): unknown {
  try {
    return JSON.parse(slice(text, span));
  } catch {
    return undefined;
  }
}

/** A string's value, without a parse when it holds no escape. */
function stringAt(text: string, [start, end]: Span): string | undefined {
  if (text.charCodeAt(start) !== 0x22) return undefined;
  const inner = text.slice(start + 1, end - 1);
  return inner.includes("\\") ? (parseSpan(text, [start, end]) as string | undefined) : inner;
}

/** The tool a member map describes; `undefined` without a string name, `null` when a member it reads is not JSON. */
function listedTool(
  text: string,
  members: ReadonlyMap<string, Span>,
  written: Written,
): ListedTool | undefined | null {
  const nameSpan = members.get("name");
  if (nameSpan === undefined || text.charCodeAt(nameSpan[0]) !== 0x22) return undefined;
  const name = stringAt(text, nameSpan);
  if (name === undefined) return null;
  const tool: ListedTool = { name };
  for (const key of READ) {
    const span = members.get(key);
    if (span === undefined) continue;
    const value = parseSpan(text, span);
    if (value === undefined) return null;
    tool[key] = value;
  }
  const schemaSpan = members.get("inputSchema");
  if (schemaSpan !== undefined) {
    const schema = parseSpan(text, schemaSpan);
    if (schema === undefined) return null;
    tool.inputSchema = schema;
    if (isStringified(text, schemaSpan, written, schema))
      tool.schemaJson = { text, span: schemaSpan };
  }
  return tool;
}

/** The `tools/list` answer `text` holds, read from its text; `undefined` where it holds no single such answer. */
export function readListingText(text: string): ListingText | undefined {
  let result: ObjectText | undefined;
  let toolsSpan: Span | undefined;
  const elements: ListingText["elements"] = [];
  let unread = false;
  const readTool = (at: number): number => {
    if (text.charCodeAt(at) !== 0x7b) {
      const end = valueEnd(text, at);
      elements.push([at, end]);
      return end;
    }
    const written: Written = { members: 0, plain: true };
    const object = readObject(text, at, (key, from) =>
      valueEnd(text, from, key === "inputSchema" ? written : undefined),
    );
    if (!object) return -1;
    const span: Span = [at, object.end];
    const tool = listedTool(text, object.members, written);
    if (tool === null) unread = true;
    elements.push(tool ? { span, members: object.members, tool } : span);
    return object.end;
  };
  // Each level is read once: the result and its tools where they are written, the rest skipped.
  const message = readObject(text, skipSpace(text, 0), (key, at) => {
    if (key !== "result") return valueEnd(text, at);
    result = readObject(text, at, (inner, from) => {
      if (inner !== "tools") return valueEnd(text, from);
      const array = readArray(text, from, readTool);
      toolsSpan = array && [from, array.end];
      return array?.end ?? -1;
    });
    return result?.end ?? -1;
  });
  if (!message || skipSpace(text, message.end) !== text.length || unread) return undefined;
  const idSpan = message.members.get("id");
  if (!idSpan || !result || !toolsSpan || message.members.has("method")) return undefined;
  const id = parseSpan(text, idSpan);
  if (id === undefined) return undefined;
  const resultSpan = message.members.get("result") as Span;
  return { id, idSpan, resultSpan, resultMembers: result.members, toolsSpan, elements };
}
