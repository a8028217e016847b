/**
 * The `tools/list` results of one JSON text (a body, or an event's data)
 * renamed as the model sees them: the one listing of a text spliced into it
 * (listing-splice.ts), or reused from the answer remembered for the same
 * origin text (remembered-answer.ts); any other payload parsed whole and
 * written back with every value it did not change as the origin wrote it. A
 * first page read to its listing's end where the profile has a tool ceiling,
 * and a listing over it answered in search mode (search-mode.ts).
 */
import {
  MAX_NESTING,
  nestsTooDeep,
  parseExact,
  parseJson,
  quotedName,
  spliceExact,
  writtenAsIn,
} from "../json";
import {
  OPEN_BRACE,
  OPEN_BRACKET,
  readArray,
  readObject,
  skipSpace,
  valueEnd,
} from "../json-spans";
import { logEvent } from "../log";
import { type RequestId, requestAnswered } from "../protocol/jsonrpc";
import { readListingText } from "../protocol/listing-text";
import {
  isToolsListResult,
  type ListedTool,
  looksLikeToolsListResult,
  misspelledMember,
  namedTools,
  type ToolsListResult,
} from "../protocol/tools-list";
import { editsListings } from "../rules/tool-rules";
import { type NamedListing, sentAsReceived, type ToolMap } from "../toolmap/tool-map";
import type { Hold } from "../transport/read-bounded";
import { isTool, spliceListing, spliceSearchMode } from "./listing-splice";
import { answerText } from "./local-answers";
import { rememberAnswer, reuseAnswer } from "./remembered-answer";
import { searchModeResult } from "./search-mode";
import { renameTools, scopedToCaller } from "./tools-list";
export const LIST_CHANGED = "notifications/tools/list_changed";

type Message = { id?: RequestId; method?: string; result?: unknown };

/**
 * Which results to rename: those answering the `tools/list` requests of the
 * body (by id), or, on a resumed stream whose requests are out of view, every
 * result shaped like a `tools/list` result.
 */
export type ListResults = ReadonlySet<RequestId> | "by-shape";

/** The listing request a message answers (its id as the client asked), if it answers one. */
function listingAnswered(message: Message | null, which: ListResults): RequestId | undefined {
  if (message?.id === undefined) return undefined;
  if (which === "by-shape")
    return looksLikeToolsListResult(message.result) ? message.id : undefined;
  const asked = requestAnswered(message.id, which);
  return asked !== undefined && isToolsListResult(message.result) ? asked : undefined;
}

export const expectsLists = (which: ListResults) => which === "by-shape" || which.size > 0;

/**
 * Whether the answer remembered from a whole listing may answer `id`: a
 * listing asked for from its start. Its caller is shown what it was made from,
 * a whole listing, while a later page with the same text is the last of a
 * longer one (the caller's tools of the pages before it would read as unlisted).
 */
export function takesRememberedAnswer(
  id: unknown,
  { listIds, wholeListing }: Pick<ListingRewrite, "listIds" | "wholeListing">,
): boolean {
  if (listIds === "by-shape") return false;
  const asked = requestAnswered(id, listIds);
  return asked !== undefined && wholeListing?.isFirstPage(asked) === true;
}

/** A response whose result holds tools. */
const respondsWithTools = (message: Message | null) =>
  message?.id !== undefined && isToolsListResult(message.result) && message.result.tools.length > 0;

/**
 * Whether a listing asked for is under a policy that edits listings: then an
 * answer the proxy cannot read one way is never passed on (`UnreadListing`).
 */
export const guardsListings = ({ listIds, toolMap }: ListingRewrite) =>
  expectsLists(listIds) && editsListings(toolMap.policy);

/**
 * An answer that may hold a listing and that the proxy cannot read as every
 * client would, under a policy that edits listings: refused (`502`), or its
 * event stream ended, rather than shown as it came.
 */
export class UnreadListing extends Error {}

/**
 * What the pages of a listing are, for the results the proxy itself asked
 * the client's questions about: whether a result is a first page, and the
 * pages after it, read from the origin on behalf of the request. Without
 * it (a resumed stream, whose requests are out of view) pages are renamed
 * one by one and no listing turns into search mode.
 */
export interface WholeListing {
  isFirstPage(id: RequestId): boolean;
  /**
   * The tools of the pages after `cursor`, read into `hold` (the share of the
   * isolate's budget of the read they complete); `undefined` when they could
   * not all be read.
   */
  readRest(id: RequestId, cursor: string, hold?: Hold): Promise<ListedTool[] | undefined>;
}

/** A listing as it was answered: the tools it lists (0 for an answer reused from memory), in search mode or not. */
export interface Listed {
  tools: number;
  search: boolean;
}

/** How the listings in an answer are renamed. */
export interface ListingRewrite {
  /** Which results get model-facing names. */
  listIds: ListResults;
  toolMap: ToolMap;
  /**
   * Called for each listing answered, with the id of the request it answers
   * as the client wrote it (`1` for an answer with the id `"1"`).
   */
  answered?: (id: RequestId, listed: Listed) => void;
  wholeListing?: WholeListing;
  /** The share of the isolate's budget of the read in progress (read-bounded.ts). */
  hold?: Hold;
  /**
   * Says that a text that may hold a listing was passed on as it came (`reason`), where no
   * policy refuses it: `response_not_rewritten`, by default; a stream says it once.
   */
  notRewritten?: (reason: string) => void;
  /**
   * `false` for an event of another type than `message`, which the SDKs' clients skip: a
   * `list_changed` there tells no client its tools changed, and drops no listing (as on a
   * stream the proxy only watches, transport/event-watch.ts).
   */
  readAsMessage?: boolean;
}

/** A page named as the model sees it: its tools, and for a listing over the profile's ceiling, search mode (with the number of tools). */
interface NamedPage {
  listing: NamedListing;
  search?: number;
}

/** What a named page lists: its tools less those left out, or in search mode those a search finds. */
const listedOf = ({ listing, search }: NamedPage): Listed =>
  search === undefined
    ? { tools: listing.names.size - listing.hidden.size, search: false }
    : { tools: search, search: true };

/** A listing reused from memory: the same as the one named before it. */
export const REUSED: Listed = { tools: 0, search: false };

/**
 * Names one `tools/list` page. A first page, when the profile has a tool
 * ceiling, is read to the end of its listing: a listing over the ceiling
 * becomes search mode (search-mode.ts, with the number of tools); any other
 * page is named as it came, its cursor kept.
 */
async function namePage(
  id: RequestId,
  page: readonly ListedTool[],
  nextCursor: unknown,
  { toolMap, wholeListing, hold }: ListingRewrite,
): Promise<NamedPage> {
  const first = wholeListing?.isFirstPage(id) ?? false;
  const last = typeof nextCursor !== "string";
  if (toolMap.profile.toolCeiling === undefined || !first) {
    const part = !first ? "later" : last ? "whole" : "first";
    return { listing: await toolMap.nameListing(page, part) };
  }
  // Proven before the read of the rest, which it spends a re-list of: a source new to the isolate
  // would take it from those of sources the origin never listed.
  await toolMap.proven();
  const rest = last ? [] : await wholeListing?.readRest(id, nextCursor, hold);
  if (rest === undefined) return { listing: await toolMap.nameListing(page, "first") };
  const listing = await toolMap.nameListing([...page, ...rest], "whole");
  // The tools a search can find: none the rules hide, each name once.
  return listing.search ? { listing, search: listing.search.size } : { listing };
}

/** Says how many entries of a page's `tools` were no tool, which are left out (tools-list.ts `renamedTool`). */
function noteEntriesLeftOut(entries: number, tools: number, { search }: NamedPage) {
  if (search === undefined && entries > tools) {
    logEvent("listing_entries_dropped", { count: entries - tools });
  }
}

/** One `tools/list` result as the model sees it, and what it lists. */
async function renamedResult(
  id: RequestId,
  result: ToolsListResult,
  rewrite: ListingRewrite,
): Promise<{ result: ToolsListResult; listed: Listed }> {
  const page = namedTools(result);
  const named = await namePage(id, page, result.nextCursor, rewrite);
  noteEntriesLeftOut(result.tools.length, page.length, named);
  const renamed =
    named.search === undefined
      ? renameTools(result, named.listing)
      : scopedToCaller(
          searchModeResult(result, rewrite.toolMap.profile, named.search),
          named.listing,
        );
  return { result: renamed, listed: listedOf(named) };
}

/** Renames the listings in one parsed JSON-RPC payload (a message or a batch); `undefined` when nothing changed. */
export async function rewriteMessages(
  payload: unknown,
  rewrite: ListingRewrite,
): Promise<unknown | undefined> {
  const messages: unknown[] = Array.isArray(payload) ? payload : [payload];
  const guarded = guardsListings(rewrite);
  let changed = false;
  const rewritten = [];
  for (const item of messages) {
    const misspelled = guarded ? misspelledMember(item) : undefined;
    if (misspelled !== undefined) {
      throw new UnreadListing(`member ${quotedName(misspelled)} spelled as another`);
    }
    const message = item as Message | null;
    if (message?.method === LIST_CHANGED && rewrite.readAsMessage !== false) {
      await rewrite.toolMap.forget();
    }
    const asked = listingAnswered(message, rewrite.listIds);
    if (message?.id !== undefined && asked !== undefined) {
      const renamed = await renamedResult(asked, message.result as ToolsListResult, rewrite);
      rewritten.push(writtenAsIn({ ...message, result: renamed.result }, message));
      changed = true;
      rewrite.answered?.(asked, renamed.listed);
    } else if (guarded && respondsWithTools(message)) {
      // It answers no listing asked for, as the proxy reads ids; a client may read its id
      // otherwise (the Python SDK reads a string with `int()`: "١" answers request 1 there).
      throw new UnreadListing("a listing that answers no listing request");
    } else {
      rewritten.push(item);
    }
  }
  if (!changed) return undefined;
  return Array.isArray(payload) ? rewritten : rewritten[0];
}

/**
 * `rewriteMessages` on JSON text, written over it: every message it did not
 * change as the origin wrote it, and in one it changed every tool and member
 * it did not change (json.ts `spliceExact`); `undefined` when the text is not
 * JSON or nothing changed.
 * `before`: answers of the proxy's own to put first (the payload becomes a batch).
 * A single listing is renamed in its text (listing-splice.ts); anything else is parsed whole.
 */
export async function rewriteJsonText(
  text: string,
  rewrite: ListingRewrite,
  before: readonly unknown[] = [],
): Promise<string | undefined> {
  const { toolMap, listIds } = rewrite;
  const ids = before.length === 0 && listIds !== "by-shape" ? listIds : undefined;
  const remembered = ids && (await toolMap.rememberedAnswer());
  const reused =
    remembered && reuseAnswer(text, remembered, (id) => takesRememberedAnswer(id, rewrite));
  if (remembered && reused) {
    await toolMap.answeredFromMemory(remembered);
    rewrite.answered?.(requestAnswered(reused.id, ids) as RequestId, REUSED);
    // Sent as it came: the caller sends the origin's own bytes, not this text encoded again.
    return sentAsReceived(remembered) ? undefined : reused.text;
  }
  const spliced = ids && (await rewriteListingText(text, ids, rewrite));
  // Nothing changed: the caller sends the origin's own bytes, not this text encoded again.
  if (spliced !== undefined) return spliced === text ? undefined : spliced;
  const parsed = parseExact(text);
  if (parsed === undefined) {
    // Some clients read text `JSON.parse` does not (Python's `json` reads `NaN`), or nested deeper.
    const reason = nestsTooDeep(text) ? `nests deeper than ${MAX_NESTING} levels` : "not JSON";
    if (guardsListings(rewrite)) throw new UnreadListing(reason);
    if (!expectsLists(rewrite.listIds)) return undefined;
    if (rewrite.notRewritten) rewrite.notRewritten(reason);
    else logEvent("response_not_rewritten", { reason });
    return undefined;
  }
  if (guardsListings(rewrite) && writesMemberTwice(text)) {
    throw new UnreadListing("a member written twice");
  }
  const rewritten = await rewriteMessages(parsed.value, rewrite);
  if (rewritten === undefined && before.length === 0) return undefined;
  // Written over the origin's text: every message no listing changed is as it came.
  const payload =
    rewritten === undefined
      ? text
      : spliceExact(text, parsed.value, rewritten, parsed.exact, { messages: true });
  if (before.length === 0) return payload;
  // The proxy's own answers first, written as they are alone (not with the origin's spelling of
  // a like value: its `3.0` made the proxy's answer to request 3 one to `3.0`), then the origin's.
  const origin = payload.trim();
  const messages = Array.isArray(parsed.value) ? origin.slice(1, -1).trim() : origin;
  return `[${[...before.map(answerText), ...(messages === "" ? [] : [messages])].join(",")}]`;
}

/**
 * Whether a message of the payload `text` writes a member twice, or its
 * result does: JavaScript, Python and Go read the last, a reader that takes
 * the first (simdjson's on-demand API) may read another message, a listing
 * where the proxy read another answer (an id, a result or its tools written
 * twice). Read at those two levels, where what makes a message a listing is;
 * a tool that writes a key twice is written again as the proxy read it
 * (listing-splice.ts).
 */
function writesMemberTwice(text: string): boolean {
  const start = skipSpace(text, 0);
  const messages =
    text.charCodeAt(start) === OPEN_BRACKET
      ? (readArray(text, start)?.elements.map(([at]) => at) ?? [])
      : [start];
  const member = (key: string, at: number) =>
    key === "result" && text.charCodeAt(at) === OPEN_BRACE
      ? (readObject(text, at)?.end ?? -1)
      : valueEnd(text, at);
  return messages.some(
    (at) => text.charCodeAt(at) === OPEN_BRACE && readObject(text, at, member) === undefined,
  );
}

/**
 * The one `tools/list` answer `text` holds, renamed in its text, and
 * remembered when it is a whole listing; `undefined` when the text is not
 * such an answer to one of `ids`, or not one the splice reads.
 */
async function rewriteListingText(
  text: string,
  ids: ReadonlySet<RequestId>,
  rewrite: ListingRewrite,
): Promise<string | undefined> {
  const read = readListingText(text, rewrite.toolMap.writtenBefore());
  const asked = read && requestAnswered(read.id, ids);
  if (!read || asked === undefined) return undefined;
  const cursorSpan = read.resultMembers.get("nextCursor");
  const nextCursor = cursorSpan && parseJson(text.slice(...cursorSpan));
  const page = read.elements.filter(isTool);
  const named = await namePage(asked, page, nextCursor, rewrite);
  noteEntriesLeftOut(read.elements.length, page.length, named);
  const spliced =
    named.search === undefined
      ? spliceListing(text, read, named.listing)
      : spliceSearchMode(text, read, rewrite.toolMap.profile, {
          listing: named.listing,
          total: named.search,
        });
  if (spliced === undefined) return undefined;
  rewrite.answered?.(asked, listedOf(named));
  if (cursorSpan === undefined && named.listing.settled) {
    rewrite.toolMap.rememberAnswer(rememberAnswer(text, read.idSpan, spliced.text, spliced.idSpan));
  }
  return spliced.text;
}
