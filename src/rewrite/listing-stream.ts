/**
 * An event stream that may carry `tools/list` results (the answer to a POST
 * with a `tools/list` in it, a resumed stream): read by JavaScript, each event
 * that may hold a listing renamed (listing-answer.ts), until every listing
 * asked for is answered; then the rest is the runtime's to pass
 * (transport/hand-off.ts).
 *
 * Where the operator's rules edit listings, an origin's second answer to the
 * same request must not pass unread, with what the rules hide in it: the
 * stream is read on past the listings, `MAX_READ_PAST_LISTINGS` at most, every
 * answer in it renamed and hidden as the first. A stream that goes on past
 * that ends there when its request asked for listings alone: every answer the
 * client asked it for has come, and MCP's server closes the stream after its
 * answers. One that answers other requests too (a batch) is handed on.
 */
import type { CallAnswers } from "../analytics/call-answers";
import { logEvent } from "../log";
import { eventStreamRewriter } from "../transport/event-rewrite";
import { transformUntil } from "../transport/hand-off";
import { type Hold, MAX_REWRITE_BYTES } from "../transport/read-bounded";
import { type ChunkRewriter, type ChunkWatcher, mayMention, watchedAfter } from "../transport/sse";
import {
  guardsListings,
  LIST_CHANGED,
  type ListingRewrite,
  rewriteJsonText,
  UnreadListing,
} from "./listing-answer";

/**
 * How much of a stream is read past its listings where the rules edit them:
 * an origin that ends its stream after its answers, as every SDK's server
 * does, has ended it long before.
 */
export const MAX_READ_PAST_LISTINGS = 64 * 1024;

/** Only an event that may mention these can need renaming or drop the cache; the rest is not parsed. */
const MAY_MATTER = ['"tools"', LIST_CHANGED];
const mayMatter = (data: string) => mayMention(data, MAY_MATTER);
/**
 * Under a policy that edits listings, also an event that spells `"tools"` as
 * a lenient reader reads it (`"Tools"`, `"toolſ"`: case-blind, and `ſ` as `s`),
 * so that it is parsed and refused (`misspelledMember`), not passed unread.
 */
const mayMatterToAnyReader = (data: string) => mayMatter(data) || /"tools"/iu.test(data);

export interface ListingStream extends ListingRewrite {
  /** The stream's share of the isolate's read budget. */
  hold: Hold;
  /** Call analytics: the listings and calls the request waits for. */
  answers?: CallAnswers;
  /** Call analytics' watch on the calls' answers, in the same pump, until they are answered. */
  calls?: ChunkWatcher;
  /** Whether the request asked the origin for more than listings: answers still to come after them. */
  asksMore: boolean;
  /**
   * The most listings the stream is read for, whatever its events' types: it answers one body
   * (a resumed stream replays one), which asks for at most `MAX_BATCH_MESSAGES`.
   */
  maxListings?: number;
}

/** `body` for the client, its listings renamed; `prefix` (the proxy's own answers) first. */
export function readListings(
  body: ReadableStream<Uint8Array>,
  stream: ListingStream,
  prefix?: Uint8Array,
): ReadableStream<Uint8Array> {
  const { listIds, answers, calls, hold, asksMore, maxListings } = stream;
  const guarded = guardsListings(stream);
  const awaited = listIds === "by-shape" ? undefined : new Set(listIds);
  const listed = () => awaited?.size === 0;
  /**
   * Listings read, in events of any type: past `maxListings`, the stream answers no body. Those
   * of another type than `message` answer nothing, and counted only as answers, an origin's
   * stream of them was each named (a `tools_renamed` line, a KV write) for as long as it lasted.
   */
  let read = 0;
  const readPast = () => maxListings !== undefined && read > maxListings;
  /** Whether a text that may hold a listing passed as it came (`response_not_rewritten`, once). */
  let notRewritten = false;
  /** Bytes read since every listing was answered, the chunk being read among them. */
  let past = 0;
  /** Those of them before the chunk being read. */
  let pastBefore = 0;
  const pastBound = () => listed() && past >= MAX_READ_PAST_LISTINGS;
  /**
   * Whether nothing more is parsed: the rest passes as it came. Past the bound only from the
   * chunk after the one that crosses it, which is read whole: counted before it is read, one
   * chunk of more than 64 KiB after the listings would have passed unread.
   */
  const finished = guarded
    ? () => asksMore && listed() && pastBefore >= MAX_READ_PAST_LISTINGS
    : () => listed() || readPast();
  const rewriter = eventStreamRewriter({
    rewrite: async (data, message) => {
      try {
        // An event of another type is renamed as any (a lenient reader may read it), but answers
        // nothing: the SDKs' clients skip it, and read the listing that comes after it.
        return await rewriteJsonText(data, {
          ...stream,
          readAsMessage: message,
          answered: (id, { tools, search }) => {
            read++;
            if (!message) return;
            awaited?.delete(id);
            answers?.listed(id, tools, search);
          },
          // Once a stream: an origin may send such events for as long as the stream lasts.
          notRewritten: (reason) => {
            if (notRewritten) return;
            notRewritten = true;
            logEvent("response_not_rewritten", { reason });
          },
        });
      } catch (error) {
        // The stream ends rather than show it.
        if (error instanceof UnreadListing) {
          logEvent("listing_refused", { reason: `an event that may hold it: ${error.message}` });
        }
        throw error;
      }
    },
    mayMatter: guarded ? mayMatterToAnyReader : mayMatter,
    finished,
    maxEventChars: MAX_REWRITE_BYTES,
    hold,
  });
  const counted: ChunkRewriter = guarded
    ? {
        write(chunk, emit) {
          pastBefore = past;
          if (listed()) past += chunk.byteLength;
          return rewriter.write(chunk, emit);
        },
        end: (emit) => rewriter.end(emit),
        release: () => rewriter.release(),
      }
    : rewriter;
  // A listing the rewrite never named, in a stream no watch reads for calls, was not seen.
  const judged = calls
    ? watchedAfter(counted, calls)
    : answers?.waiting
      ? answers.endingWith(counted)
      : counted;
  const callsAnswered = () => !calls || !answers?.waiting;
  const next = () => {
    // What follows may hold listings, and is read no further: it ends, as a stream past its
    // listings does. A client resumes it from the last event it got, in a request of its own.
    if (guarded && readPast()) {
      logEvent("listing_stream_ended", { listings: maxListings });
      return "end";
    }
    if (guarded && !asksMore && pastBound()) {
      logEvent("listing_stream_ended", { limit: MAX_READ_PAST_LISTINGS });
      return "end";
    }
    return finished() && callsAnswered();
  };
  return transformUntil(body, judged, next, prefix);
}
