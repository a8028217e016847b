/**
 * Which client sent a request, as it says itself (docs/observability.md): the
 * 2026-07-28 `_meta` envelope every request carries; else, for a 2025 session,
 * the `clientInfo` its `initialize` gave, remembered in isolate memory by the
 * caller and the session the origin opened them (a session's later requests
 * reaching another isolate are not known there); else the product of its
 * `User-Agent`. Bounded and cleaned (data-point.ts `bounded`): a client's
 * words reach dashboards.
 */
import { SharedBoundedMap } from "../bounded-map";
import { isPlainObject, own } from "../json";
import type { JsonRpcMessage } from "../protocol/jsonrpc";
import { metaOf } from "../protocol/revision";
import { bounded, MAX_CLIENT_CHARS } from "./data-point";

export interface ClientInfo {
  name: string;
  version: string;
  /** Where it was read: `meta`, `initialize`, `user_agent`, or empty when nowhere. */
  source: "meta" | "initialize" | "user_agent" | "";
}

const CLIENT_INFO = "io.modelcontextprotocol/clientInfo";
/** The longest session id remembered: the origin chooses it (MCP asks for visible ASCII). */
const MAX_SESSION_ID = 256;
/** The 2025 sessions whose client an isolate remembers, and how many of them one source's. */
const MAX_SESSIONS = 4_096;
const MAX_SESSIONS_PER_SOURCE = MAX_SESSIONS / 8;

const UNKNOWN: ClientInfo = { name: "", version: "", source: "" };

/** `clientInfo` as a client writes it (`{name, version}`), when it is one. */
function infoOf(value: unknown, source: ClientInfo["source"]): ClientInfo | undefined {
  if (!isPlainObject(value)) return undefined;
  const name = own(value, "name");
  if (typeof name !== "string" || name === "") return undefined;
  const version = own(value, "version");
  return {
    name: bounded(name, MAX_CLIENT_CHARS),
    version: typeof version === "string" ? bounded(version, MAX_CLIENT_CHARS) : "",
    source,
  };
}

/** `Mozilla/5.0 …` → Mozilla, 5.0: the first product of a `User-Agent` (RFC 9110 §10.1.5). */
function userAgentOf(header: string | null): ClientInfo | undefined {
  const product = header?.trim().split(/\s/, 1)[0];
  if (!product) return undefined;
  const slash = product.indexOf("/");
  const name = slash < 0 ? product : product.slice(0, slash);
  const version = slash < 0 ? "" : product.slice(slash + 1);
  return name === ""
    ? undefined
    : {
        name: bounded(name, MAX_CLIENT_CHARS),
        version: bounded(version, MAX_CLIENT_CHARS),
        source: "user_agent",
      };
}

/**
 * What a 2025 session's `initialize` said its client was, by the caller's
 * digest (sessions aside, toolmap/callers.ts) and the session id the origin
 * answered with: an origin chooses its ids, and one may number each user's
 * sessions, so that another caller's `initialize`, keyed by the id alone,
 * named the client of a session not theirs. 4,096 sessions, each for a day,
 * 512 of them of one source (the caller's credentials, whatever the queries
 * and sessions: one token opening session after session pushed every other
 * caller's out; past its share, its own set longest ago goes).
 */
export class ClientMemory {
  private readonly sessions = new SharedBoundedMap<string, ClientInfo>(
    MAX_SESSIONS,
    MAX_SESSIONS_PER_SOURCE,
    24 * 60 * 60 * 1000,
  );

  /**
   * Remembers the client an `initialize` among `messages` names, for `caller`
   * (their digests, made only when there is one to remember: toolmap/callers.ts
   * `pins` and `source`) and the session its answer opened.
   */
  async rememberSession(
    messages: readonly JsonRpcMessage[],
    answer: Response,
    caller: { pins(): Promise<string>; source(): Promise<string | undefined> },
  ): Promise<void> {
    const session = answer.headers.get("mcp-session-id");
    if (!answer.ok || !session || session.length > MAX_SESSION_ID) return;
    for (const message of messages) {
      if (!("method" in message) || message.method !== "initialize") continue;
      const info = infoOf(
        isPlainObject(message.params) && own(message.params, "clientInfo"),
        "initialize",
      );
      if (info) {
        const [pins, source] = await Promise.all([caller.pins(), caller.source()]);
        this.sessions.set(`${pins}\n${session}`, info, source);
      }
      return;
    }
  }

  /** The client of `caller`'s request with `headers` carrying `messages`. */
  async clientOf(
    messages: readonly JsonRpcMessage[],
    headers: Headers,
    caller: () => Promise<string>,
  ): Promise<ClientInfo> {
    for (const message of messages) {
      const info = infoOf(metaOf(message)?.[CLIENT_INFO], "meta");
      if (info) return info;
    }
    const session = headers.get("mcp-session-id");
    const remembered =
      session === null || session.length > MAX_SESSION_ID || this.sessions.size === 0
        ? undefined
        : this.sessions.get(`${await caller()}\n${session}`);
    return remembered ?? userAgentOf(headers.get("user-agent")) ?? UNKNOWN;
  }
}
