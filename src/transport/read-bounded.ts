/**
 * Reads a body whole, up to a bound and no further: the proxy never holds more
 * than `maxBytes` of one body, however much the peer sends, nor more than
 * `MAX_HELD_BYTES` of all it reads at once in an isolate. Past a bound the
 * caller gets what was read and the unread rest, to refuse or to pass on.
 */

import { logEvent } from "../log";
import { type ErrorAddressee, ErrorCode, errorResponse } from "../protocol/jsonrpc";

/**
 * The most the proxy reads of one JSON body, or holds of one event, to rename
 * a listing: far above any real tool list, far below an isolate's 128 MB.
 */
export const MAX_REWRITE_BYTES = 16 * 1024 * 1024;

/**
 * The most one isolate's requests hold at once of what they read whole
 * (request bodies, listings, events that may hold one). Each read has its own
 * bound, but requests served at once share the isolate's 128 MB, and what a
 * request holds while it works costs several times its bytes (text, parsed
 * values, the answer written). Two listings at `MAX_REWRITE_BYTES` fit.
 */
export const MAX_HELD_BYTES = 32 * 1024 * 1024;

/**
 * What a request reads first is taken whatever the others hold: a call's body
 * is rarely larger, and a client that keeps large bodies open must not have
 * every call refused. The budget bounds what is read past it.
 */
export const ALWAYS_TAKEN_BYTES = 64 * 1024;

/** What one hold took: kept apart from the hold, so that a registry holding it keeps the hold collectable. */
interface Share {
  taken: number;
}

/** What calls back with the share of each hold registered once the hold is garbage. */
export type DroppedShares = Pick<FinalizationRegistry<Share>, "register">;

const runtimeRegistry = (giveBack: (share: Share) => void) =>
  typeof FinalizationRegistry === "function" ? new FinalizationRegistry(giveBack) : undefined;

/**
 * What an isolate's reads hold together, bounded by `limit`. A read that
 * would pass it stops rather than wait: requests that each held bytes while
 * they waited for the others' could wait for ever.
 *
 * A share is given back by `release`, and, where the runtime has
 * `FinalizationRegistry`, once the share is garbage: workerd drops the work of
 * a request whose client went away without running its `finally`, and what
 * it read goes with it; its count must not stay behind.
 */
export class ReadBudget {
  #held = 0;
  readonly #dropped: DroppedShares | undefined;
  /** `dropped`: where a garbage hold's share is given back; the runtime's registry, where it has one. */
  constructor(
    readonly limit = MAX_HELD_BYTES,
    readonly alwaysTaken = ALWAYS_TAKEN_BYTES,
    dropped: (giveBack: (share: Share) => void) => DroppedShares | undefined = runtimeRegistry,
  ) {
    this.#dropped = dropped((share) => this.#giveBack(share));
  }

  /** What the isolate's reads hold now. */
  get held(): number {
    return this.#held;
  }

  /** A share for one request (or one stream's events), given back with `release`. */
  hold(): Hold {
    // The count lives apart from the hold, so that the registry's reference keeps it alive and not the hold.
    const share: Share = { taken: 0 };
    const hold: Hold = {
      take: (bytes) => {
        if (share.taken + bytes > this.alwaysTaken && this.#held + bytes > this.limit) {
          return false;
        }
        this.#held += bytes;
        share.taken += bytes;
        return true;
      },
      release: () => this.#giveBack(share),
    };
    this.#dropped?.register(hold, share);
    return hold;
  }

  #giveBack(share: Share) {
    this.#held -= share.taken;
    share.taken = 0;
  }
}

/**
 * The answer to a request the isolate's budget cannot take now (`what`: what
 * it would have read): `503`, to be sent again in a moment, when the others'
 * reads are done. Nothing of it reached the origin, or, for an answer, the
 * client.
 */
export function busyResponse(what: string, addressee: ErrorAddressee): Response {
  logOverBudget(what);
  return errorResponse(
    503,
    ErrorCode.InternalError,
    `Busy: the proxy is reading too much for other requests to read ${what} now; send the request again in a moment`,
    addressee,
    { "Retry-After": "1" },
  );
}

/** The log line for a read the isolate's budget could not take (`what`: what it would have read). */
export function logOverBudget(what: string): void {
  logEvent("reads_over_budget", { what, limit: MAX_HELD_BYTES });
}

export interface Hold {
  /**
   * Takes `bytes` more; `false`, taking nothing, when the isolate's reads
   * would hold too much and the share would pass what is always taken.
   */
  take(bytes: number): boolean;
  /** Gives back all it took; it may take again. */
  release(): void;
}

/** What a bounded read read of a body, and its unread rest, to refuse or to pass on. */
interface Unread {
  head: Uint8Array[];
  rest: ReadableStreamDefaultReader<Uint8Array>;
}

export type Bounded =
  | { kind: "complete"; bytes: Uint8Array }
  /** Over the body's bound. */
  | ({ kind: "over" } & Unread)
  /** Over what the isolate's reads may hold together. */
  | ({ kind: "busy" } & Unread);

/**
 * A kept part shorter than this is copied onto the one before it, in buffers
 * of this length: kept alone, a chunk costs V8 some hundred bytes whatever
 * its length, which no count of bytes sees (a body a byte a chunk: 230 MB for
 * 1 MB read). A buffer is no longer than the longest part it takes, as one
 * short part between long ones fills a buffer of its own (16 KiB buffers:
 * 18 MB for 1 MB read so).
 */
const COPIED_BYTES = 1024;
/** The buffers `keepPart` copies into, which it may copy more into. */
const copiedInto = new WeakSet<ArrayBufferLike>();

/** `part` added to `parts`, the bytes of a body or an event as they came, at about the cost of its bytes. */
export function keepPart(parts: Uint8Array[], part: Uint8Array): void {
  const last = parts.at(-1);
  if (part.byteLength >= COPIED_BYTES) parts.push(part);
  else if (
    last !== undefined &&
    copiedInto.has(last.buffer) &&
    last.byteLength + part.byteLength <= COPIED_BYTES
  ) {
    const into = new Uint8Array(last.buffer, 0, last.byteLength + part.byteLength);
    into.set(part, last.byteLength);
    parts[parts.length - 1] = into;
  } else {
    const into = new Uint8Array(COPIED_BYTES);
    into.set(part);
    copiedInto.add(into.buffer);
    parts.push(into.subarray(0, part.byteLength));
  }
}

/** `chunks` as one buffer (`size`: their bytes in all). */
export function concat(
  chunks: readonly Uint8Array[],
  size = chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0),
): Uint8Array {
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** `body` read whole, within `maxBytes`, and within the isolate's budget when a `hold` on it is given. */
export async function readBounded(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
  hold?: Hold,
): Promise<Bounded> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { kind: "complete", bytes: concat(chunks, size) };
    keepPart(chunks, value);
    size += value.byteLength;
    if (size > maxBytes) return { kind: "over", head: chunks, rest: reader };
    if (hold && !hold.take(value.byteLength)) return { kind: "busy", head: chunks, rest: reader };
  }
}

/** A stream of what `readBounded` read and then the rest, as the peer sent it. */
export function rejoin(head: readonly Uint8Array[], rest: ReadableStreamDefaultReader<Uint8Array>) {
  let index = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (index < head.length) {
        controller.enqueue(head[index++] as Uint8Array);
        return;
      }
      const { done, value } = await rest.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => rest.cancel(reason),
  });
}
