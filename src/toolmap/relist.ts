/**
 * The fallback when the map does not know a name (a cold isolate, KV not yet
 * consistent, KV down): the proxy asks the origin itself, with a `tools/list`
 * of its own on behalf of the client's `tools/call`: the caller's credentials,
 * session and protocol version, the client's envelope where the revision has
 * one (protocol/revision.ts), and an id no client uses. Every page is
 * fetched, up to `MAX_PAGES` and `MAX_REWRITE_BYTES` in all (the bound of
 * one message), within `ORIGIN_TIMEOUT_MS` in all (each page's headers
 * and body together): a listing is whole or not at all. The same
 * reads the pages after a client's first one, to know a whole listing's size
 * (search mode, docs/search-mode.md). One client request makes at most one
 * such read (`ListingReads`), so it costs the origin at most `1 + MAX_PAGES`
 * requests (docs/limits.md).
 */
import { createParser } from "eventsource-parser";
import type { Config } from "../config";
import { isPlainObject, PLACES_ONLY, parseJson, stringifyExact } from "../json";
import { logEvent } from "../log";
import { unreadAddressee } from "../protocol/jsonrpc";
import { requestOnBehalfOf, revisionOf } from "../protocol/revision";
import { isToolsListResult, type ListedTool, namedTools } from "../protocol/tools-list";
import { BYTES_DESCRIBED, mediaTypeOf } from "../transport/headers";
import { fetchOrigin, withoutOriginPath } from "../transport/origin";
import { type Hold, MAX_REWRITE_BYTES, readBounded } from "../transport/read-bounded";
import { EventLines, endableFeed, LINE_WEIGHT, streamDecoder } from "../transport/sse";

/** The most pages one listing read asks the origin for: its requests, too. */
export const MAX_PAGES = 50;

interface ListPage {
  tools: ListedTool[];
  nextCursor?: string;
}

function asPage(message: Record<string, unknown> | undefined): ListPage | undefined {
  const result = message?.result;
  if (!isToolsListResult(result)) return undefined;
  const { nextCursor } = result;
  return {
    tools: namedTools(result),
    nextCursor: typeof nextCursor === "string" ? nextCursor : undefined,
  };
}

/** The message that answers request `id` in what one body or event holds: itself, or one of a batch. */
function answering(message: unknown, id: string): Record<string, unknown> | undefined {
  const answers = (one: unknown) => isPlainObject(one) && one.id === id;
  if (Array.isArray(message)) return message.find(answers);
  return answers(message) ? (message as Record<string, unknown>) : undefined;
}

/**
 * The message in `response` that answers request `id`: its JSON body, or the
 * first event of its stream that does; either may be a batch holding it (an
 * origin may answer one request with a batch of one, as JSON-RPC allows, and
 * the TypeScript SDK's client and the proxy's own listing rewrite read). `read` counts the bytes of a
 * listing's pages read so far: past `MAX_REWRITE_BYTES` in all, or past what
 * `hold` may take of the isolate's budget, it throws.
 */
export async function readAnswer(
  response: Response,
  id: string,
  read: { bytes: number },
  hold: Hold | undefined,
): Promise<Record<string, unknown> | undefined> {
  if (!response.body) return undefined;
  const left = MAX_REWRITE_BYTES - read.bytes;
  const over = () => new Error(`the listing is over ${MAX_REWRITE_BYTES} bytes in all`);
  const busy = () => new Error("the isolate's reads hold too much at once");
  if (mediaTypeOf(response.headers) !== "text/event-stream") {
    const bounded = await readBounded(response.body, left, hold);
    if (bounded.kind !== "complete") {
      await bounded.rest.cancel();
      throw bounded.kind === "over" ? over() : busy();
    }
    read.bytes += bounded.bytes.byteLength;
    return answering(parseJson(new TextDecoder().decode(bounded.bytes)), id);
  }
  let answer: Record<string, unknown> | undefined;
  const parser = createParser({
    maxBufferSize: left,
    onEvent: ({ data }) => {
      answer ??= answering(parseJson(data), id);
    },
  });
  const decode = streamDecoder();
  const reader = response.body.getReader();
  const lines = endableFeed((text) => parser.feed(text));
  const eventLines = new EventLines();
  try {
    while (answer === undefined) {
      const { done, value } = await reader.read();
      if (done) {
        lines.end();
        break;
      }
      read.bytes += value.byteLength;
      if (read.bytes > MAX_REWRITE_BYTES) throw over();
      if (hold && !hold.take(value.byteLength)) throw busy();
      // The count above bounds what the parser holds too: it holds no more characters than bytes
      // came, and an object or two for each line of the event it reads, which count as well.
      const text = decode(value);
      if (read.bytes + eventLines.count(text).lines * LINE_WEIGHT > MAX_REWRITE_BYTES) throw over();
      lines.feed(text);
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return answer;
}

export interface RelistOptions {
  /** The cursor of the first page to ask for; the first of all without one. */
  from?: string;
  /**
   * Handed the origin's `401` to the credentials the listing was asked with,
   * its body unread: the caller's own answer, as their request would have got
   * it. Without this, its body is cancelled.
   */
  onUnauthorized?: (response: Response) => void;
  /** The request's share of the isolate's budget (read-bounded.ts), which what is read takes from. */
  hold?: Hold;
  /**
   * The client's request's signal (transport/origin.ts `clientLeft`): a client that goes away
   * ends the read. An origin may hold a listing's stream open without answering, and the
   * proxy, which reads it whole, would wait on it, and keep it open, for as long.
   */
  clientLeft?: AbortSignal;
}

/**
 * Every page of the origin's listing (from `from` on, when given), asked for
 * on behalf of `cause` with `originHeaders`, the headers the client's own
 * request to the origin carries (its credentials as `AUTH_MODE` decided);
 * `undefined` when any page could not be read.
 */
export async function relistTools(
  target: URL,
  originHeaders: Headers,
  cause: unknown,
  config: Config,
  { from, onUnauthorized, hold, clientLeft }: RelistOptions = {},
): Promise<ListedTool[] | undefined> {
  const revision = revisionOf(originHeaders, cause);
  const tools: ListedTool[] = [];
  // The pages together, as one message is: what they hold is kept until the last is read.
  const read = { bytes: 0 };
  // The whole read within ORIGIN_TIMEOUT_MS: fetchOrigin's timeout covers the headers alone, and
  // an origin that sends them and then trickles its body, or never ends its stream, would hold the
  // client's request, and what was read, for as long as the client waits.
  const deadline = Date.now() + config.originTimeoutMs;
  const late = new AbortController();
  const timer = setTimeout(() => late.abort(), config.originTimeoutMs);
  // Either ends the origin's request, and its stream at once for whatever reads it.
  const ended = clientLeft ? AbortSignal.any([clientLeft, late.signal]) : late.signal;
  const tooLate = () =>
    logEvent("relist_failed", {
      origin: target.host,
      status: "timeout",
      detail: `the listing was not read whole within ${config.originTimeoutMs} ms`,
    });
  let cursor = from;
  try {
    for (let pageNumber = 0; pageNumber < MAX_PAGES; pageNumber++) {
      if (late.signal.aborted) {
        tooLate();
        return undefined;
      }
      const id = `mcp-edge-rewriter/relist/${crypto.randomUUID()}`;
      const request = requestOnBehalfOf(
        cause,
        new Headers(originHeaders),
        revision,
        "tools/list",
        cursor === undefined ? {} : { cursor },
      );
      request.headers.set("content-type", "application/json");
      request.headers.set("accept", "application/json, text/event-stream");
      // The client's digests were of its own body, not of this one.
      for (const name of BYTES_DESCRIBED) request.headers.delete(name);
      // The client's envelope in it as the client wrote it (revision.ts `requestOnBehalfOf`).
      const body = stringifyExact(
        { jsonrpc: "2.0", id, method: "tools/list", params: request.params },
        PLACES_ONLY,
      );
      const reply = await fetchOrigin(
        target,
        { method: "POST", headers: request.headers, body, clientLeft: ended },
        // What is left of the listing's time, for this page's headers.
        Math.max(deadline - Date.now(), 1),
        unreadAddressee(originHeaders),
      );
      if (reply.kind === "failed" || !reply.response.ok) {
        logEvent("relist_failed", {
          origin: target.host,
          status: reply.kind === "failed" ? reply.failure : reply.response.status,
        });
        if (reply.kind === "answered") {
          if (reply.response.status === 401 && onUnauthorized) onUnauthorized(reply.response);
          else await reply.response.body?.cancel();
        }
        return undefined;
      }
      let page: ListPage | undefined;
      let detail: string | undefined;
      try {
        page = asPage(await readAnswer(reply.response, id, read, hold));
      } catch (error) {
        if (late.signal.aborted) {
          tooLate();
          return undefined;
        }
        detail = withoutOriginPath(String(error), target);
      }
      if (!page) {
        logEvent("relist_failed", {
          origin: target.host,
          status: "no tools/list result",
          ...(detail === undefined ? {} : { detail }),
        });
        return undefined;
      }
      // One by one: spread as arguments, a page of some 200,000 tools (a few MB) overflowed the stack.
      for (const tool of page.tools) tools.push(tool);
      if (page.nextCursor === undefined) return tools;
      cursor = page.nextCursor;
    }
    logEvent("relist_failed", { origin: target.host, status: `more than ${MAX_PAGES} pages` });
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The proxy's own reads of the origin's listing for one client request: at
 * most one, whether for a call it cannot resolve (from the first page) or
 * for the rest of a client's first page (from its cursor), and only where
 * the re-list limit lets it (`mayRead`: tool-map.ts `takeRelist`, once for
 * the read). An ask from where the read started shares its pages, read on
 * behalf of the first to ask (every first page of a batch has the same
 * cursor, as a rule); an ask from anywhere else gets none, and its listing
 * is named page by page. Without this, each first page of a batch of 300
 * made the proxy read the rest itself: 1,801 origin requests for one.
 */
export class ListingReads {
  private started:
    | { from: string | undefined; tools: Promise<ListedTool[] | undefined> }
    | undefined;

  constructor(
    private readonly target: URL,
    /** The headers the client's own request to the origin carries (`relistTools`). */
    private readonly originHeaders: Headers,
    private readonly config: Config,
    private readonly mayRead: () => Promise<boolean>,
    /** The client's request's signal: its going away ends the read (`RelistOptions.clientLeft`). */
    private readonly clientLeft?: AbortSignal,
  ) {}

  /** `relistTools` for `cause`, if this request has not read the listing from elsewhere. */
  read(cause: unknown, options: RelistOptions = {}): Promise<ListedTool[] | undefined> {
    if (this.started) {
      return this.started.from === options.from ? this.started.tools : Promise.resolve(undefined);
    }
    const tools = this.mayRead().then((may) =>
      may
        ? relistTools(this.target, this.originHeaders, cause, this.config, {
            ...options,
            clientLeft: this.clientLeft,
          })
        : undefined,
    );
    this.started = { from: options.from, tools };
    return tools;
  }
}
