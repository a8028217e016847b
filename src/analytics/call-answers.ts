/**
 * How the answers to a request's calls and listings ended, read as they pass
 * to the client (docs/observability.md, "Outcomes"). A response is judged (answer-verdict.ts) by
 * its members: `error` is `rpc_error` (its code the `error.type`), a call's
 * `result` with `isError: true` is `tool_error`, one with `resultType:
 * "input_required"` (2026-07-28: the tool asks for input before it runs on)
 * `input_required`, a task's creation (the tool runs on, its result read
 * later by requests of their own) `task_created`, any other result `ok`; a
 * listing is `ok` once its rewrite named it (`listed`).
 *
 * What is read, and its cost, is bounded: a JSON body or an event of at most
 * 64 KiB is parsed; a longer one passes unparsed, and is judged by what its
 * text may mention (`mayMention`, as a parse would read it): a response with
 * no `"error"`, `"isError"` or `"input_required"` in it (nor `"task"`, to a
 * call that may be answered with one) is `ok` when it is the one call
 * waiting, else `unread`. Nothing is held back from the client
 * but a short JSON body, one message a client reads none of before its end
 * (`watchJson`): an answer only analytics reads passes as the runtime pumps
 * it, and a copy of it is read beside (`#readCopy`); one the rewrite reads
 * anyway is judged in its pump (`eventsWatcher`), which hands the stream to
 * the runtime once every answer is known (transport/hand-off.ts).
 */
import { isPlainObject, own, parseJson } from "../json";
import { type RequestId, requestAnswered } from "../protocol/jsonrpc";
import { eventWatcher } from "../transport/event-watch";
import { type ChunkRewriter, type ChunkWatcher, mayMention } from "../transport/sse";
import { ERROR, NOT_OK, RESPONSE, RESULT, SKIP_MARKERS, TASK, verdictOf } from "./answer-verdict";
import { type MessageRecord, OK, UNANSWERED, UNREAD, type Verdict } from "./call-record";

/** The longest JSON body or event parsed to judge the answers in it. */
export const MAX_JUDGED_CHARS = 64 * 1024;
/** The most of an answer read to judge it, beside the client's own stream. */
export const MAX_READ_BYTES = 256 * 1024;
/** What a read of it after the first takes: one turn of the isolate for that much of a long answer. */
const READ_SIZE = 64 * 1024;
/** The first read's: a short answer's event fits it, and a buffer costs its size to allocate. */
const FIRST_READ_SIZE = 16 * 1024;

/** `read`: whether the verdict was read from the answer, not known from its status or a failed request. */
export type Settle = (
  record: MessageRecord,
  verdict: Verdict,
  answerBytes: number,
  read: boolean,
) => void;

export class CallAnswers {
  /**
   * What waits, by id, in the order asked: a batch may give two requests one
   * id, and the first response with it is taken for the first of them (as
   * the origin answers in turn), each of them settled once.
   */
  readonly #waiting = new Map<RequestId, MessageRecord[]>();
  readonly #ids = new Set<RequestId>();
  #count = 0;
  /** Bytes of the answer passed so far. */
  #bytes = 0;
  /**
   * What the calls still waiting get if the answer ends now, after a response
   * too long to parse passed: `ok` when it could only be theirs and mentioned
   * no error, else `unread`.
   */
  #unparsed: Verdict | undefined;
  /** Whether a watch reads the answer as it streams, and settles what waits when it ends. */
  streaming = false;

  constructor(
    records: readonly MessageRecord[],
    private readonly settle: Settle,
    /** Keeps the request's invocation alive for work after its answer is returned. */
    private readonly waitUntil: (promise: Promise<unknown>) => void,
  ) {
    for (const record of records) {
      if (record.local !== undefined) continue;
      const same = this.#waiting.get(record.id);
      if (same) same.push(record);
      else this.#waiting.set(record.id, [record]);
      this.#ids.add(record.id);
      this.#count++;
    }
  }

  /** Whether an answer is still to come. */
  get waiting(): boolean {
    return this.#count > 0;
  }

  /**
   * Whether a call, or a request of a task that reads a call's end, waits for
   * its answer (not only listings, which their rewrite judges).
   */
  get waitingForCalls(): boolean {
    for (const same of this.#waiting.values()) {
      if (same.some((record) => record.method !== "tools/list")) return true;
    }
    return false;
  }

  /** What waits for a response with `id` (as a client takes it), in the order asked. */
  #waitingFor(id: unknown): MessageRecord[] {
    const asked = requestAnswered(id, this.#ids);
    return (asked === undefined ? undefined : this.#waiting.get(asked)) ?? [];
  }

  #end(record: MessageRecord, verdict: Verdict, bytes = this.#bytes, read = true) {
    const same = this.#waiting.get(record.id) ?? [];
    const at = same.indexOf(record);
    if (at < 0) return;
    same.splice(at, 1);
    this.#count--;
    if (same.length === 0) {
      this.#waiting.delete(record.id);
      this.#ids.delete(record.id);
    }
    this.settle(record, verdict, bytes, read);
  }

  /** A listing's answer was renamed: it lists `tools`, in search mode when `search`. */
  listed(id: RequestId, tools: number, search: boolean, bytes?: number): void {
    const record = this.#waitingFor(id).find((waiting) => waiting.method === "tools/list");
    if (!record) return;
    record.tools = tools;
    record.search = search;
    this.#end(record, OK, bytes);
  }

  /** Judges the responses of a parsed payload (a message or a batch). */
  see(payload: unknown, bytes?: number): void {
    for (const message of Array.isArray(payload) ? payload : [payload]) {
      if (!isPlainObject(message)) continue;
      const record = this.#waitingFor(own(message, "id"))[0];
      const verdict = record && verdictOf(message, record);
      if (record && verdict) this.#end(record, verdict, bytes);
    }
  }

  /** Judges the responses in a JSON text (a body, or an event's data). */
  seeText(text: string, bytes?: number): void {
    if (!this.waiting || !mayMention(text, RESPONSE)) return;
    if (text.length > MAX_JUDGED_CHARS) {
      this.#passedUnparsed((marker) => mayMention(text, [marker]));
      return;
    }
    const payload = parseJson(text);
    if (payload === undefined) this.#unparsed = UNREAD;
    else this.see(payload, bytes);
  }

  /** A JSON answer the rewrite read whole (`bytes` long): judged, and what it does not answer ends. */
  judgeWhole(text: string, bytes: number): void {
    this.#bytes = bytes;
    this.seeText(text);
    this.ended();
  }

  /**
   * `rewriter`, a listing rewrite of an event stream no watch reads for
   * calls, ending what is left with the stream: a listing it never named
   * (an error, which it does not read) is `unread`.
   */
  endingWith(rewriter: ChunkRewriter): ChunkRewriter {
    this.streaming = true;
    return {
      write: (chunk, emit) => {
        this.#bytes += chunk.byteLength;
        return rewriter.write(chunk, emit);
      },
      end: (emit) => rewriter.end(emit),
      release: () => {
        rewriter.release();
        this.endAll(UNREAD);
      },
    };
  }

  /** The one message waiting, when it is alone. */
  #lone(): MessageRecord | undefined {
    return this.#count === 1 ? this.#waiting.values().next().value?.[0] : undefined;
  }

  /**
   * A response too long to parse passed; `mentioned`: what its text may
   * mention. A `"task"` is no `ok` only for a call that may be answered with
   * a task's creation: to any other, it is a tool's words. A task's status
   * (`tasks/get`, `tasks/cancel`) is told by no marker: unread.
   */
  #passedUnparsed(mentioned: (marker: string) => boolean) {
    if (!mentioned(RESULT) && !mentioned(ERROR)) return;
    const lone = this.#lone();
    const notOk = NOT_OK.some(mentioned) || (lone?.mayCreateTask === true && mentioned(TASK));
    const status = lone?.method === "tasks/get" || lone?.method === "tasks/cancel";
    this.#unparsed = this.#unparsed === undefined && !notOk && !status && lone ? OK : UNREAD;
  }

  /**
   * The answer ended (or the client went away): what still waits gets what a
   * long response that passed unparsed may have said, else `unanswered`.
   */
  ended(): void {
    this.endAll(this.#unparsed ?? UNANSWERED);
  }

  /** What still waits ends as `verdict`, read from the answer unless `read` is false. */
  endAll(verdict: Verdict, bytes = this.#bytes, read = true): void {
    for (const record of [...this.#waiting.values()].flat())
      this.#end(record, verdict, bytes, read);
  }

  /**
   * The body of a JSON answer for the client. An uncompressed one whose
   * `Content-Length` is at most `MAX_JUDGED_CHARS` is read whole by the
   * runtime, judged, and sent as those bytes (it is one message: a client
   * reads none of it before its end); any other passes as it comes, and a
   * copy of it is read (`#readCopy`). A compressed one's length says nothing
   * of what it decodes to.
   */
  async watchJson(origin: Response): Promise<ReadableStream<Uint8Array> | Uint8Array> {
    this.streaming = true;
    const length = origin.headers.get("content-length") ?? "";
    const declared =
      origin.headers.has("content-encoding") || !/^\d{1,9}$/.test(length)
        ? Number.NaN
        : Number(length);
    if (declared <= MAX_JUDGED_CHARS) {
      let bytes: Uint8Array;
      try {
        bytes = new Uint8Array(await origin.arrayBuffer());
      } catch (error) {
        // The answer failed midway: unanswered, and the client's body fails as the origin's did.
        this.ended();
        return new ReadableStream({ start: (controller) => controller.error(error) });
      }
      this.judgeWhole(new TextDecoder().decode(bytes), bytes.byteLength);
      return bytes;
    }
    return this.#tee(origin.body as ReadableStream<Uint8Array>, this.#jsonWatcher());
  }

  /** The body of an event-stream answer for the client: it passes as it comes, and a copy of it is read (`#readCopy`). */
  watchEvents(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
    return this.#tee(body, this.eventsWatcher());
  }

  /**
   * `body` for the client, as the runtime passes it, and a copy read by
   * `watcher` after the answer is returned (the request's `waitUntil`).
   */
  #tee(body: ReadableStream<Uint8Array>, watcher: ChunkWatcher): ReadableStream<Uint8Array> {
    this.streaming = true;
    const [client, copy] = body.tee();
    this.waitUntil(this.#readCopy(copy, watcher));
    return client;
  }

  /**
   * Reads `copy` until every answer is known, its first `MAX_READ_BYTES` at
   * most: what still waits past them is `unread`. The runtime's tee holds
   * for the client what this reading got ahead of it, so at most that much;
   * once done, the copy is cancelled and the client's stream goes on alone.
   * The first read takes what has come (an answer of one short event is
   * judged in it, without waiting for the stream's end); each later one
   * `READ_SIZE` bytes, or what there is when the answer ends, into one
   * buffer: a long answer costs the isolate a turn per `READ_SIZE`.
   */
  async #readCopy(copy: ReadableStream<Uint8Array>, watcher: ChunkWatcher) {
    const reader = copy.getReader({ mode: "byob" });
    const drop = () => {};
    let read = 0;
    let ended = false;
    let into = new Uint8Array(FIRST_READ_SIZE);
    let atLeast = 1;
    try {
      while (this.waiting && read <= MAX_READ_BYTES) {
        const { done, value } = await reader.readAtLeast(atLeast, into);
        const size = value?.byteLength ?? 0;
        read += size;
        if (value && size > 0) watcher.write(value, drop);
        // Fewer bytes than asked for: the answer ended.
        if (done || size < atLeast) {
          ended = true;
          watcher.end(drop);
          break;
        }
        // The read gave `into`'s memory to `value`, which the watcher has done with.
        into =
          atLeast === 1 ? new Uint8Array(READ_SIZE) : new Uint8Array(value.buffer, 0, READ_SIZE);
        atLeast = READ_SIZE;
      }
      if (read > MAX_READ_BYTES) this.endAll(UNREAD);
    } catch {
      // The answer failed midway: what still waits was not answered (`release`).
    } finally {
      watcher.release();
      // An ended copy has nothing left to let go of; the client's stream does not wait on this.
      if (!ended) reader.cancel().catch(() => {});
    }
  }

  /** A watch on a JSON answer, judged at its end (or by what it mentions, past `MAX_JUDGED_CHARS`). */
  #jsonWatcher(): ChunkWatcher {
    const decoder = new TextDecoder();
    let text = "";
    let over = false;
    /** Past the bound: what the text so far may mention, and its last characters. */
    const mentioned = new Set<string>();
    let tail = "";
    const note = (part: string) => {
      const seen = tail + part;
      for (const marker of SKIP_MARKERS) if (mayMention(seen, [marker])) mentioned.add(marker);
      tail = seen.slice(-64);
    };
    return {
      write: (chunk, emit) => {
        emit(chunk);
        this.#bytes += chunk.byteLength;
        const part = decoder.decode(chunk, { stream: true });
        if (over) return note(part);
        text += part;
        if (text.length <= MAX_JUDGED_CHARS) return;
        over = true;
        note(text);
        text = "";
      },
      end: () => {
        const part = decoder.decode();
        if (over) {
          note(part);
          this.#passedUnparsed((marker) => mentioned.has(marker));
        } else this.seeText(text + part);
        this.ended();
      },
      release: () => this.ended(),
    };
  }

  /**
   * A watch on an event stream, passed on as it comes, until every answer is
   * known (`waiting`). A stream the origin ends after an event with an id,
   * before the answers, is one the client resumes for them (2025-11-25's SSE
   * polling: the origin closes a call's stream after its priming event), on
   * a stream this request does not read: they are `unread`, not `unanswered`.
   */
  eventsWatcher(): ChunkWatcher {
    this.streaming = true;
    let resumable = false;
    const events = eventWatcher({
      markers: RESPONSE,
      onEvent: (data) => this.seeText(data),
      maxEventChars: MAX_JUDGED_CHARS,
      onSkipped: (mentioned) => this.#passedUnparsed(mentioned),
      skipMarkers: SKIP_MARKERS,
      onId: () => {
        resumable = true;
      },
    });
    return {
      write: (chunk, emit) => {
        this.#bytes += chunk.byteLength;
        events.write(chunk, emit);
      },
      end: (emit) => {
        events.end(emit);
        // What still waits at `release`, unless a response too long to parse passed.
        if (resumable) this.#unparsed ??= UNREAD;
      },
      release: () => this.ended(),
    };
  }
}
