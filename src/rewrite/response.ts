/**
 * Origin → client: `tools/list` results get model-facing names, in a JSON body
 * or inside an event stream, event by event (each text renamed by
 * listing-answer.ts). `notifications/tools/list_changed`
 * on the GET stream or a `subscriptions/listen` stream drops the isolate's
 * cached names for the scope. Everything else streams through as it came: an
 * answer with nothing to rename is the origin's own body, and a body in an
 * encoding the runtime did not decode is never read or relabeled.
 */
import type { CallAnswers } from "../analytics/call-answers";
import { isPlainObject, leadingBom, parseJson } from "../json";
import { logEvent } from "../log";
import {
  type ErrorAddressee,
  ErrorCode,
  errorResponse,
  type RequestId,
  requestAnswered,
} from "../protocol/jsonrpc";
import { sentAsReceived } from "../toolmap/tool-map";
import { eventWatcher, watchEventStream } from "../transport/event-watch";
import { transformUntil } from "../transport/hand-off";
import {
  BYTES_DESCRIBED,
  bodyIsDecoded,
  clientResponseHeaders,
  mediaTypeOf,
  otherCharsetOf,
} from "../transport/headers";
import { relayResponse, statusLineOf } from "../transport/origin";
import {
  type Bounded,
  busyResponse,
  type Hold,
  MAX_REWRITE_BYTES,
  type ReadBudget,
  readBounded,
  rejoin,
} from "../transport/read-bounded";
import { serializeEvent, watchedAfter } from "../transport/sse";
import {
  expectsLists,
  guardsListings,
  LIST_CHANGED,
  type ListingRewrite,
  REUSED,
  rewriteJsonText,
  takesRememberedAnswer,
  UnreadListing,
} from "./listing-answer";
import { readListings } from "./listing-stream";
import { answerText } from "./local-answers";
import { reuseAnswerBytes } from "./remembered-answer";

/** The largest event a watched stream parses: a `list_changed` notification is far smaller. */
const MAX_WATCHED_EVENT_CHARS = 64 * 1024;

/** Whether an event's data is (or, in a 2025-03-26 batch, holds) the `list_changed` notification itself. */
function announcesListChanged(data: string): boolean {
  const payload = parseJson(data);
  return (Array.isArray(payload) ? payload : [payload]).some(
    (message) => isPlainObject(message) && message.method === LIST_CHANGED,
  );
}

export interface ResponseContext extends ListingRewrite {
  /**
   * Whether an event stream with nothing to rename is watched for
   * `tools/list_changed` (the GET stream, a `subscriptions/listen` stream);
   * any other is handed to the runtime untouched.
   */
  watchesListChanged: boolean;
  /** Who an error stands in for, if the origin's body cannot be read. */
  addressee: ErrorAddressee;
  /** Answers the proxy gave itself (to some calls of a batch), merged into the origin's. */
  localResponses?: readonly unknown[];
  /** What the isolate's requests hold at once of what they read whole: a body or event read takes its share. */
  reads: ReadBudget;
  /** The most listings a stream is read for, whatever its events' types (listing-stream.ts). */
  maxListings?: number;
  /**
   * Call analytics: the answers the request's calls and listings wait for,
   * judged as they pass (a watch on a call's answer is the only reading the
   * proxy adds for them, and only with the `CALLS` dataset bound).
   */
  answers?: CallAnswers;
}

const encoder = new TextEncoder();

/**
 * The proxy's own answers, for a body it answered entirely by itself; or,
 * `origin`, the one whose other messages the origin took without answering
 * (`202`), with the origin's headers but those of its body: what it said
 * beside (its cookies, as `cookiesForClient` let them, each apart) reaches
 * the client as from any answer of the origin's.
 */
export function localAnswer(
  responses: readonly unknown[],
  batch: boolean,
  origin?: Response,
): Response {
  const headers = origin ? clientResponseHeaders(origin.headers) : new Headers();
  for (const name of [...BYTES_DESCRIBED, "content-encoding"]) headers.delete(name);
  headers.set("content-type", "application/json");
  return new Response(answerText(batch ? responses : responses[0]), { headers });
}

/**
 * The answer to a request for a listing the proxy cannot read, where the
 * operator's policy edits listings (`refusing` in `rewriteResponse`): refused
 * (`502`), as passing it as it came would show the tools and descriptions the
 * policy leaves out; `unread`, the rest of the origin's body, is cancelled.
 */
async function refusedListing(
  context: ResponseContext,
  reason: string,
  unread?: { cancel(): Promise<void> },
): Promise<Response> {
  await unread?.cancel();
  logEvent("listing_refused", { reason });
  return errorResponse(
    502,
    ErrorCode.OriginUnreachable,
    `Origin's answer to tools/list cannot be read (${reason}); under the operator's rules a listing is passed on only as the proxy rewrote it`,
    context.addressee,
  );
}

/**
 * Why the proxy does not read a body, if it does not: an encoding the runtime
 * did not decode, or JSON labeled with a charset other than UTF-8 (an event
 * stream is UTF-8 whatever its label says).
 */
function unreadBody(headers: Headers, mediaType: string): string | undefined {
  if (!bodyIsDecoded(headers)) {
    return `content-encoding ${headers.get("content-encoding")?.slice(0, 64)}`;
  }
  const charset = mediaType === "application/json" ? otherCharsetOf(headers) : undefined;
  return charset === undefined ? undefined : `charset ${charset}`;
}

/**
 * The origin's response with another body (or a stream the proxy may write otherwise): its
 * status and headers, less those that describe the origin's bytes.
 */
function rewrittenResponse(origin: Response, body: BodyInit): Response {
  const headers = clientResponseHeaders(origin.headers);
  for (const name of BYTES_DESCRIBED) headers.delete(name);
  return new Response(body, { ...statusLineOf(origin), headers });
}

/**
 * The answer to a JSON body that is the remembered answer with another id,
 * compared and sent as bytes (remembered-answer.ts `reuseAnswerBytes`);
 * `undefined` when it is not one, and the body is read as text.
 */
async function answerFromMemory(
  origin: Response,
  body: Uint8Array,
  context: ResponseContext,
): Promise<Response | undefined> {
  const { toolMap, listIds } = context;
  if (listIds === "by-shape") return undefined;
  const remembered = await toolMap.rememberedAnswer();
  const bytes = remembered && toolMap.answerBytes(remembered);
  const reused = bytes && reuseAnswerBytes(body, bytes, (id) => takesRememberedAnswer(id, context));
  if (!remembered || !reused) return undefined;
  await toolMap.answeredFromMemory(remembered);
  context.answered?.(requestAnswered(reused.id, listIds) as RequestId, REUSED);
  // Sent as it came: the origin's own bytes.
  if (sentAsReceived(remembered)) return relayResponse(origin, body);
  return rewrittenResponse(origin, new Blob(reused.parts));
}

/**
 * A JSON answer that may hold a listing (or to merge the proxy's own answers
 * into), read whole within `MAX_REWRITE_BYTES` and what its `hold` may take
 * of the isolate's budget, and rewritten.
 */
async function rewriteJsonBody(
  origin: Response,
  context: ResponseContext & { hold: Hold },
): Promise<Response> {
  const { addressee, localResponses = [], hold, answers } = context;
  const local = localResponses.length > 0;
  const refusing = guardsListings(context);
  const body = origin.body as ReadableStream<Uint8Array>;
  let read: Bounded;
  try {
    read = await readBounded(body, MAX_REWRITE_BYTES, hold);
  } catch (error) {
    logEvent("origin_body_unreadable", { status: origin.status, error: String(error) });
    return errorResponse(
      502,
      ErrorCode.OriginUnreachable,
      "Origin sent a response body that could not be read",
      addressee,
    );
  }
  if (read.kind === "busy") {
    // A listing asked for can be asked for again.
    if (expectsLists(context.listIds) && origin.ok) {
      await read.rest.cancel();
      return busyResponse("the origin's answer", addressee);
    }
    // An error's body (a 401's, say) is no listing, and answers to calls that ran are theirs.
    logEvent("response_not_rewritten", { reason: "the isolate's reads hold too much at once" });
    return relayResponse(origin, rejoin(read.head, read.rest));
  }
  if (read.kind === "over") {
    const reason = `body over ${MAX_REWRITE_BYTES} bytes`;
    if (refusing) return refusedListing(context, reason, read.rest);
    logEvent("response_not_rewritten", { reason });
    return relayResponse(origin, rejoin(read.head, read.rest));
  }
  const bytes = read.bytes.byteLength;
  if (local && origin.ok && bytes === 0) {
    answers?.ended();
    return localAnswer(localResponses, true, origin);
  }
  const judged: typeof context = answers
    ? { ...context, answered: (id, { tools, search }) => answers.listed(id, tools, search, bytes) }
    : context;
  const fromMemory = local ? undefined : await answerFromMemory(origin, read.bytes, judged);
  if (fromMemory) return fromMemory;
  const text = new TextDecoder().decode(read.bytes);
  let rewritten: string | undefined;
  try {
    rewritten = await rewriteJsonText(text, judged, localResponses);
  } catch (error) {
    if (!(error instanceof UnreadListing)) throw error;
    // An error's body is no listing: clients read no messages in it.
    if (origin.ok) return refusedListing(context, error.message);
  }
  // After the rewrite, which judged the listings it named: the calls, and listings that failed.
  if (origin.ok) answers?.judgeWhole(text, bytes);
  if (local && rewritten === undefined) {
    logEvent("local_answers_dropped", {
      reason: "origin body is not JSON",
      count: localResponses.length,
    });
  }
  // Nothing changed: the origin's own bytes, which its Content-Length describes.
  if (rewritten === undefined) return relayResponse(origin, read.bytes);
  // The BOM the origin's body starts with, which the decoder dropped, as it came.
  return rewrittenResponse(origin, leadingBom(read.bytes) + rewritten);
}

/** A `2xx` that says it has no body. */
const emptyOk = (origin: Response) =>
  origin.ok && (origin.body === null || origin.headers.get("content-length") === "0");

export async function rewriteResponse(
  origin: Response,
  context: ResponseContext,
): Promise<Response> {
  const { listIds, watchesListChanged, toolMap, localResponses = [] } = context;
  const mediaType = mediaTypeOf(origin.headers);
  const local = localResponses.length > 0;
  // A listing asked for, under a policy that edits listings: one the proxy cannot read is refused.
  const refusing = guardsListings(context);

  // Only notifications and responses went to the origin: the answers are all ours. MCP asks for
  // 202 then; an origin that answers 200 with no body says as much.
  if (local && (origin.status === 202 || origin.status === 204 || emptyOk(origin))) {
    await origin.body?.cancel();
    // What went on got no response (call analytics: `unanswered`).
    context.answers?.ended();
    return localAnswer(localResponses, true, origin);
  }
  if (!origin.body || (local && !origin.ok)) return relayResponse(origin);
  const reason = unreadBody(origin.headers, mediaType);
  if (reason !== undefined) {
    if (refusing) return refusedListing(context, reason, origin.body);
    if (expectsLists(listIds) || local) logEvent("response_not_rewritten", { reason });
    return relayResponse(origin);
  }

  // Call analytics watches a call's answer as it passes: a JSON body to its end, an event
  // stream until the call's response has passed. An error status is judged by the status.
  const { answers } = context;
  const watchCalls = origin.ok && (answers?.waitingForCalls ?? false);

  if (mediaType === "text/event-stream") {
    // A call's answer passes with no JavaScript per chunk: a `list_changed` in it is caught
    // when the client lists again.
    if (!expectsLists(listIds) && !watchesListChanged && !local && !watchCalls) {
      return relayResponse(origin);
    }
    const prefix = local
      ? encoder.encode(
          localResponses
            .map((response) => serializeEvent({ event: "message", data: answerText(response) }))
            .join(""),
        )
      : undefined;
    const forgetOnListChanged = (data: string) => {
      if (announcesListChanged(data)) void toolMap.forget();
    };
    // Calls are watched with what else reads the stream, in one pump, until they are answered;
    // alone, on a copy of the stream the runtime passes (CallAnswers.watchEvents).
    const watchAlone = watchCalls && !expectsLists(listIds) && !watchesListChanged && !local;
    if (watchAlone) return relayResponse(origin, (answers as CallAnswers).watchEvents(origin.body));
    const calls = watchCalls ? (answers as CallAnswers).eventsWatcher() : undefined;
    let body: ReadableStream<Uint8Array> = origin.body;
    if (expectsLists(listIds)) {
      // Whether the origin answers more than the listings: the body's requests, less the
      // listings and the calls the proxy answered itself.
      const asksMore =
        listIds === "by-shape" ||
        context.addressee.ids.length > listIds.size + localResponses.length;
      body = readListings(
        origin.body,
        { ...context, hold: context.reads.hold(), calls, asksMore },
        prefix,
      );
    } else if (calls || prefix) {
      const listChanged = eventWatcher({
        markers: [LIST_CHANGED],
        onEvent: forgetOnListChanged,
        maxEventChars: MAX_WATCHED_EVENT_CHARS,
      });
      const watch = calls ? watchedAfter(listChanged, calls) : listChanged;
      body = transformUntil(origin.body, watch, () => false, prefix);
    } else {
      body = origin.body.pipeThrough(
        watchEventStream(LIST_CHANGED, forgetOnListChanged, MAX_WATCHED_EVENT_CHARS),
      );
    }
    // Listings renamed, or the proxy's own answers before the origin's: not the origin's bytes.
    return expectsLists(listIds) || prefix
      ? rewrittenResponse(origin, body)
      : relayResponse(origin, body);
  }

  if ((expectsLists(listIds) || local) && mediaType === "application/json") {
    // Held until the answer is written: the origin's bytes, their text and what is made of them.
    const hold = context.reads.hold();
    try {
      return await rewriteJsonBody(origin, { ...context, hold });
    } finally {
      hold.release();
    }
  }
  // A listing answered in a type the proxy does not read (a lenient client might: the SDKs read
  // an event stream in `text/event-stream, application/json`, two Content-Type lines joined).
  const unreadType = `content-type ${mediaType.slice(0, 64)}`;
  if (refusing && origin.ok) return refusedListing(context, unreadType, origin.body);
  if (watchCalls && mediaType === "application/json") {
    return relayResponse(origin, await (answers as CallAnswers).watchJson(origin));
  }
  if (origin.ok && expectsLists(listIds)) {
    logEvent("response_not_rewritten", { reason: unreadType });
  }
  if (origin.ok && local) {
    logEvent("local_answers_dropped", { reason: unreadType, count: localResponses.length });
  }
  return relayResponse(origin);
}
