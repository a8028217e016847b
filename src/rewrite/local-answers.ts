/**
 * The answers the proxy writes itself to one request (search results, fix-it
 * texts, refusals: each answers a `tools/call`), within
 * `MAX_LOCAL_ANSWER_BYTES` together (docs/limits.md). Each is measured as it
 * is written, its JSON in UTF-8 and what frames it in a batch or an event
 * stream; one that would pass what is left becomes a short tool error that
 * names the limit. Room for that short error is kept for every call still to
 * come, so the bound holds for any batch: a body whose calls' short errors
 * alone would pass it is refused before anything is done (`LocalAnswers.for`).
 * Without a bound, a batch of 20,000 searches was answered with 62 MB built
 * in memory.
 */
import { isPlainObject, PLACES_ONLY, stringifyExact } from "../json";
import { logEvent } from "../log";
import {
  idAsWritten,
  isRequest,
  type JsonRpcMessage,
  type JsonRpcRequest,
  toolError,
} from "../protocol/jsonrpc";
import type { Revision } from "../protocol/revision";

/**
 * What frames one answer beside others: `event: message\ndata: ` and the
 * blank line in an event stream (23 bytes), a comma or a bracket in a batch.
 */
const FRAME_BYTES = 24;

/** The UTF-8 length of `text`, counted rather than encoded. */
function utf8Length(text: string): number {
  let bytes = text.length;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    // Two more for U+0800 and up, one for U+0080 and up; a surrogate pair is 4 bytes for 2 units.
    if (code >= 0x800 && (code < 0xd800 || code > 0xdfff)) bytes += 2;
    else if (code >= 0x80) bytes += 1;
  }
  return bytes;
}

/**
 * An answer of the proxy's own as JSON text: each number and string it carries
 * from a text the proxy read (a search's schemas, the request's id) written
 * as that text wrote it, where `JSON.stringify` would write the double it
 * was read as (`12345678901234567891` as `12345678901234567000`, another
 * account).
 */
export const answerText = (value: unknown): string => stringifyExact(value, PLACES_ONLY);

/** The bytes `value` takes written as JSON (`answerText`), in UTF-8. */
export function jsonBytes(value: unknown): number {
  return utf8Length(answerText(value) ?? "");
}

const isCall = (message: JsonRpcMessage): message is JsonRpcRequest =>
  isRequest(message) && message.method === "tools/call";

export class LocalAnswers {
  readonly responses: unknown[] = [];
  /** Bytes not yet written; never less than `reserved`. */
  private left: number;
  /** How many answers were cut to the short error. */
  private cut = 0;

  private constructor(
    private readonly limit: number,
    private readonly revision: Revision,
    /** The short errors of the calls not yet answered or forwarded. */
    private reserved: number,
  ) {
    this.left = limit;
  }

  /**
   * The answers to `messages`' calls within `limit` bytes; `undefined` when
   * the short errors of its calls alone would pass it (ids of unusual length).
   */
  static for(
    messages: readonly JsonRpcMessage[],
    revision: Revision,
    limit: number,
  ): LocalAnswers | undefined {
    const answers = new LocalAnswers(limit, revision, 0);
    for (const message of messages) if (isCall(message)) answers.reserved += answers.short(message);
    return answers.reserved <= limit ? answers : undefined;
  }

  private overLimit(message: JsonRpcRequest): unknown {
    return toolError(
      idAsWritten(message),
      `This answer would pass the ${this.limit} bytes the proxy writes itself in answer to one request (MAX_LOCAL_ANSWER_BYTES): send fewer calls at once, or ask for less (a lower limit).`,
      this.revision,
    );
  }

  private short(message: JsonRpcRequest): number {
    return jsonBytes(this.overLimit(message)) + FRAME_BYTES;
  }

  /**
   * Takes up `call`, the next call of the body: the bytes its answer may
   * take, beside the short errors kept for the calls after it. Called once
   * for each call, in order, whether it is answered here or forwarded.
   */
  open(call: JsonRpcRequest): number {
    this.reserved -= this.short(call);
    return this.left - this.reserved - FRAME_BYTES;
  }

  /**
   * Adds the answer to `call` (opened last): `built`, with the call's id as
   * the client wrote it, or the short error when it would pass what is left,
   * or is `undefined` (it was not built, as it would have). Returns the one added.
   */
  add(call: JsonRpcRequest, built: unknown): unknown {
    const response = isPlainObject(built) ? { ...built, id: idAsWritten(call) } : built;
    const room = this.left - this.reserved;
    const bytes = response === undefined ? undefined : jsonBytes(response) + FRAME_BYTES;
    if (bytes !== undefined && bytes <= room) {
      this.responses.push(response);
      this.left -= bytes;
      return response;
    }
    const short = this.overLimit(call);
    this.responses.push(short);
    this.left -= this.short(call);
    this.cut++;
    return short;
  }

  /** Logs how many answers were cut, if any: once per request. */
  done(): void {
    if (this.cut > 0) logEvent("local_answers_over_limit", { limit: this.limit, cut: this.cut });
  }
}
