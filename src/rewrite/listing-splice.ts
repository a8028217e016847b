/**
 * A `tools/list` answer renamed in its text (docs/performance.md): what the
 * model sees is what renameTools gives, but written by copying the origin's
 * text for every tool that stays as it came and for every byte around the
 * tools. A renamed tool gets its new name where the old one was written, a
 * viewed one its view where its `inputSchema` was, a hidden one is left out
 * with its comma; only a tool whose description or `_meta` changes, one with
 * a member no client takes (protocol/tool-shape.ts), or one whose
 * input schema, annotations or output schema write a key twice (each reader
 * would take its own), is parsed whole and written again, over its own text
 * (json.ts `spliceExact`: what stays as it came, and reads one way, is that
 * text). The cost follows
 * what changes, not the listing's size; a listing nothing changes is the
 * origin's own text, and its bytes go on as they came (response.ts).
 */
import { parseExact, parseJson, spliceExact, stringifyExact } from "../json";
import type { Span } from "../json-spans";
import type { ListingText } from "../protocol/listing-text";
import { kindAt, misshapenResultMembers } from "../protocol/tool-shape";
import { firstOfItsName, isToolsListResult } from "../protocol/tools-list";
import { WrittenTool } from "../protocol/written-tool";
import type { Profile } from "../schemas/profile";
import type { NamedListing } from "../toolmap/tool-map";
import { searchModeResult } from "./search-mode";
import { narrowsScope, PRIVATE_SCOPE, renamedTool, scopedToCaller } from "./tools-list";

/** An answer written anew, and where its id is in it (a remembered answer is split there). */
export interface Spliced {
  text: string;
  idSpan: Span;
}

export const isTool = (element: WrittenTool | Span): element is WrittenTool =>
  element instanceof WrittenTool;

/** `text[start, end)` with each edit's span written as its text instead; edits in order. */
function edited(text: string, [start, end]: Span, edits: ReadonlyArray<[Span, string]>): string {
  let out = "";
  let at = start;
  for (const [[from, to], replacement] of edits) {
    out += text.slice(at, from) + replacement;
    at = to;
  }
  return out + text.slice(at, end);
}

/** A view written with the numbers and strings of the origin's schema as the origin wrote them. */
function viewText(text: string, element: WrittenTool, view: unknown): string | undefined {
  if (element.schemaJson !== undefined) return JSON.stringify(view);
  const span = element.spanOf("inputSchema");
  const parsed = span && parseExact(text.slice(span[0], span[1]));
  return parsed ? stringifyExact(view, parsed.exact) : undefined;
}

/**
 * One tool as the model sees it: `null` when that is the origin's text as
 * it came, `undefined` when a tool that must be written again is not JSON.
 */
function toolText(
  text: string,
  element: WrittenTool,
  listing: NamedListing,
): string | null | undefined {
  const { written } = element;
  const { span } = written;
  const original = element.name;
  if (
    listing.unfit.has(original) ||
    listing.descriptions.has(original) ||
    listing.misshapen.has(original) ||
    listing.twoWays.has(original)
  ) {
    const toolText = text.slice(span[0], span[1]);
    const parsed = parseExact(toolText);
    const [rewritten] = parsed ? renamedTool(parsed.value, listing) : [];
    return parsed && spliceExact(toolText, parsed.value, rewritten, parsed.exact);
  }
  const edits: Array<[Span, string]> = [];
  const name = listing.names.get(original) ?? original;
  const nameSpan = element.spanOf("name");
  if (name !== original && nameSpan) edits.push([nameSpan, JSON.stringify(name)]);
  const view = listing.schemas.get(original);
  const schemaSpan = element.spanOf("inputSchema");
  if (view !== undefined && schemaSpan) {
    const written = viewText(text, element, view);
    if (written === undefined) return undefined;
    edits.push([schemaSpan, written]);
  }
  if (edits.length === 0) return null;
  edits.sort(([a], [b]) => a[0] - b[0]);
  return edited(text, span, edits);
}

/**
 * The answer `read` (read from `text`) with `listing`'s names, views and
 * rules, and where its id now is; `undefined` when a tool it must write
 * again is not JSON (the caller parses the whole text, and finds it is not).
 */
export function spliceListing(
  text: string,
  read: ListingText,
  listing: NamedListing,
): Spliced | undefined {
  const [toolsStart, toolsEnd] = read.toolsSpan;
  const { elements } = read;
  const spanOf = (element: WrittenTool | Span) =>
    isTool(element) ? element.written.span : element;
  // The origin's text is copied in runs as long as it stays as it came, not tool by tool:
  // a listing nothing changes comes out as one run, the origin's own text.
  let tools = "";
  let [runStart, runEnd] = [toolsStart, toolsStart];
  const copy = (from: number, to: number) => {
    if (runEnd !== from) {
      tools += text.slice(runStart, runEnd);
      runStart = from;
    }
    runEnd = to;
  };
  let last = toolsStart;
  let written = 0;
  const seen = new Set<string>();
  for (const [index, element] of elements.entries()) {
    const [start, end] = spanOf(element);
    // What the origin wrote before its first element; before any other, the separator (its comma).
    if (index === 0) copy(toolsStart, start);
    const before = last;
    last = end;
    if (!isTool(element) || !firstOfItsName(element, seen) || listing.hidden.has(element.name)) {
      continue;
    }
    const out = isTool(element) ? toolText(text, element, listing) : null;
    if (out === undefined) return undefined;
    if (written++ > 0) copy(before, start);
    if (out === null) copy(start, end);
    else {
      tools += text.slice(runStart, runEnd) + out;
      [runStart, runEnd] = [end, end];
    }
  }
  copy(last, toolsEnd);
  const edits: Array<[Span, string]> = [];
  // The tools as they came are the origin's own text, not a copy of it.
  if (tools !== "" || runStart !== toolsStart) {
    edits.push([read.toolsSpan, tools + text.slice(runStart, runEnd)]);
  }
  const scope = read.resultMembers.get("cacheScope");
  if (scope && narrowsScope(parseJson(text.slice(...scope)), listing)) {
    edits.push([scope, JSON.stringify(PRIVATE_SCOPE)]);
  }
  edits.push(...resultMembersLeftOut(text, read));
  return replaced(text, edits, read.idSpan);
}

/**
 * Edits that leave out the result's members beside its tools the clients
 * refuse (tool-shape.ts `misshapenResultMembers`), as tools-list.ts
 * `shapedResult` does of a parsed one, each run of them with the comma that
 * set it apart: after a member kept, from that member's end; at the start,
 * up to the next key kept. `tools` is always kept.
 */
function resultMembersLeftOut(text: string, read: ListingText): Array<[Span, string]> {
  const { resultMembers, resultKeys } = read;
  const misshapen = misshapenResultMembers((member) => {
    const span = resultMembers.get(member);
    return span && kindAt(text, span[0]);
  });
  if (misshapen.length === 0) return [];
  const members = [...resultMembers]
    .map(([key, [, end]]) => ({ key, start: (resultKeys.get(key) as Span)[0], end }))
    .sort((a, b) => a.start - b.start);
  const edits: Array<[Span, string]> = [];
  let keptEnd: number | undefined;
  let run: { from: number; afterKept: boolean; to: number } | undefined;
  for (const { key, start, end } of members) {
    if (misshapen.includes(key)) {
      run ??= { from: keptEnd ?? start, afterKept: keptEnd !== undefined, to: end };
      run.to = end;
      continue;
    }
    if (run) edits.push([[run.from, run.afterKept ? run.to : start], ""]);
    run = undefined;
    keptEnd = end;
  }
  if (run?.afterKept) edits.push([[run.from, run.to], ""]);
  return edits;
}

/**
 * The answer `read` with search mode's result in place of the origin's
 * (search-mode.ts). The result is parsed with its `tools` written `[]`:
 * search mode's two tools take their place, and a listing past the tool
 * ceiling is the bulk of the text (1,000 tools parsed as written cost a
 * 0.75 MB listing more than the runtime's parse and stringify of all of it).
 */
export function spliceSearchMode(
  text: string,
  { resultSpan, toolsSpan, idSpan }: ListingText,
  profile: Profile,
  { listing, total }: { listing: NamedListing; total: number },
): Spliced | undefined {
  const result = `${text.slice(resultSpan[0], toolsSpan[0])}[]${text.slice(toolsSpan[1], resultSpan[1])}`;
  const parsed = parseExact(result);
  if (!parsed || !isToolsListResult(parsed.value)) return undefined;
  const searched = scopedToCaller(searchModeResult(parsed.value, profile, total), listing);
  return replaced(
    text,
    [[resultSpan, spliceExact(result, parsed.value, searched, parsed.exact)]],
    idSpan,
  );
}

/** `text` with each edit's span written as its text instead, and where the id at `idSpan` now is. */
function replaced(text: string, edits: Array<[Span, string]>, idSpan: Span): Spliced {
  // Nothing changed: the origin's own text, not a copy of it.
  if (edits.length === 0) return { text, idSpan };
  edits.sort(([a], [b]) => a[0] - b[0]);
  let shift = 0;
  for (const [[start, end], replacement] of edits) {
    if (start < idSpan[0]) shift += replacement.length - (end - start);
  }
  return {
    text: edited(text, [0, text.length], edits),
    idSpan: [idSpan[0] + shift, idSpan[1] + shift],
  };
}
