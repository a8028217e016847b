/**
 * A `tools/list` answer read from its text (json-spans.ts) rather than
 * parsed whole: the message's id, its result's members, and for each tool its
 * span, its name, and the members the proxy reads (written-tool.ts), each
 * parsed from its own span when first read. Nothing else is parsed, or
 * checked beyond its brackets, quotes, numbers and literals;
 * rewrite/listing-splice.ts copies it as it came.
 *
 * Read only where there is one reading: a single message whose text holds
 * nothing after it, no key written twice in it, its result or a tool, and
 * none a lenient reader takes for another (tools-list.ts `misspelledKey`).
 * Anything else is `undefined`, and the caller parses the whole text.
 *
 * A tool written character for character as one of the listing read before
 * (`before`, in its order) is compared, not scanned: reading a tool is a
 * function of its text alone, so its spans are that tool's, moved.
 */
import {
  type ObjectText,
  readArray,
  readMembers,
  readObject,
  type Span,
  skipSpace,
  valueEnd,
} from "../json-spans";
import { newWritten, type Written, writtenEnd } from "../json-written";
import { LISTING_MEMBERS, misspelledKey, misspells } from "./tools-list";
import {
  isPinned,
  type Pinned,
  parseSpan,
  SPANNED,
  type Spanned,
  stringAt,
  WrittenTool,
} from "./written-tool";

export interface ListingText {
  id: unknown;
  idSpan: Span;
  resultSpan: Span;
  resultMembers: ReadonlyMap<string, Span>;
  /** Where each of its members' keys is written, quotes included. */
  resultKeys: ReadonlyMap<string, Span>;
  /** The `tools` array. */
  toolsSpan: Span;
  /** Its elements in order: a tool, or the span of one without a string `name` (left out of the answer). */
  elements: Array<WrittenTool | Span>;
}

/**
 * What the text of a member a tool does not have shows: nothing against it.
 * One for every tool, never written to (`writtenEnd` writes a member's own):
 * most tools lack some of title, annotations and output schema, and a record
 * for each was up to 3,000 objects more for a listing of 1,000 to collect.
 */
const ABSENT: Readonly<Written> = Object.freeze(newWritten());

/**
 * The levels open around an element of `tools` (the message, its result, the
 * array): what the text's reader skips is bounded in all, as a whole parse is.
 */
const TOOLS_DEPTH = 3;

/** The `tools/list` answer `text` holds, read from its text; `undefined` where it holds no single such answer. */
export function readListingText(
  text: string,
  before: readonly WrittenTool[] = [],
): ListingText | undefined {
  let result: ObjectText | undefined;
  let toolsSpan: Span | undefined;
  const elements: ListingText["elements"] = [];
  let unread = false;
  // The tool of `before` this one most likely is: the one after the last found there.
  let next = 0;
  let places: Map<string, number> | undefined;
  const readTool = (at: number): number => {
    const moved = before[next]?.movedTo(text, at);
    if (moved) {
      elements.push(moved);
      next++;
      return moved.written.span[1];
    }
    if (text.charCodeAt(at) !== 0x7b) {
      const end = valueEnd(text, at, TOOLS_DEPTH);
      elements.push([at, end]);
      return end;
    }
    const texts: Record<Pinned, Written> = {
      title: ABSENT,
      description: ABSENT,
      inputSchema: ABSENT,
      annotations: ABSENT,
      outputSchema: ABSENT,
    };
    // Where each of `SPANNED` is written, start and end in turn (-1: absent): one array of small
    // integers kept with the tool until the next listing replaces it, not a member map.
    const spans = [-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1];
    const end = readMembers(text, at, (key, from) => {
      if (misspells(key, LISTING_MEMBERS.tool)) return -1;
      let after: number;
      if (isPinned(key)) {
        texts[key] = newWritten();
        after = writtenEnd(text, from, texts[key], TOOLS_DEPTH + 1);
      } else after = valueEnd(text, from, TOOLS_DEPTH + 1);
      const slot = SPANNED.indexOf(key as Spanned);
      if (slot !== -1) {
        spans[2 * slot] = from;
        spans[2 * slot + 1] = after;
      }
      return after;
    });
    if (end === -1) return -1;
    const nameStart = spans[0] as number;
    const nameSpan: Span | undefined =
      nameStart === -1 ? undefined : [nameStart, spans[1] as number];
    const name = nameSpan && stringAt(text, nameSpan);
    if (nameSpan && text.charCodeAt(nameSpan[0]) === 0x22 && name === undefined) unread = true;
    const span: Span = [at, end];
    elements.push(name === undefined ? span : new WrittenTool(name, { text, span }, spans, texts));
    places ??= new Map(before.map((tool, index) => [tool.name, index]));
    const place = name === undefined ? undefined : places.get(name);
    if (place !== undefined) next = place + 1;
    return end;
  };
  const resultKeys = new Map<string, Span>();
  // Each level is read once: the result and its tools where they are written, the rest skipped.
  const message = readObject(text, skipSpace(text, 0), (key, at) => {
    if (key !== "result") return valueEnd(text, at, 1);
    result = readObject(
      text,
      at,
      (inner, from) => {
        if (inner !== "tools") return valueEnd(text, from, 2);
        const array = readArray(text, from, readTool);
        toolsSpan = array && [from, array.end];
        return array?.end ?? -1;
      },
      resultKeys,
    );
    return result?.end ?? -1;
  });
  if (!message || skipSpace(text, message.end) !== text.length || unread) return undefined;
  const idSpan = message.members.get("id");
  if (!idSpan || !result || !toolsSpan || message.members.has("method")) return undefined;
  if (
    misspelledKey(message.members.keys(), LISTING_MEMBERS.message) !== undefined ||
    misspelledKey(result.members.keys(), LISTING_MEMBERS.result) !== undefined
  ) {
    return undefined;
  }
  const id = parseSpan(text, idSpan);
  if (id === undefined) return undefined;
  const resultSpan = message.members.get("result") as Span;
  const resultMembers = result.members;
  return { id, idSpan, resultSpan, resultMembers, resultKeys, toolsSpan, elements };
}
