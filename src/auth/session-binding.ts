/**
 * Gate mode's sessions are their user's (SECURITY.md, "A session is its
 * user's"). The origin is reached with the proxy's key, the shared one every
 * user's requests carry alike: it cannot tell whose session an
 * `Mcp-Session-Id` is, nor whose stream a `Last-Event-ID` resumes, and the
 * SDK's transport serves whoever sends one. The proxy, which signed the user
 * in, is the server the client sees, and binds both to them, as MCP's
 * security best practices ask of a server ("Session Hijacking":
 * `<user_id>:<session_id>`): the client is handed the origin's id followed by
 * a MAC of it and the user, and the origin gets back only an id whose MAC is
 * the sender's. No state: nothing is written or remembered, so an id is the
 * user's in every isolate and location.
 *
 * The MAC's key is derived (HKDF) from the credential the origin is sent for
 * the user, which only the proxy holds: no setting of its own, and changing
 * the origin's key ends the sessions bound under it (the client is told its
 * session is not found, and starts another, as after the origin's restart).
 */
import { base64url } from "../digest";
import { rewriteEventIds } from "../transport/event-ids";
import { mediaTypeOf } from "../transport/headers";
import { statusLineOf } from "../transport/origin";

const encoder = new TextEncoder();

/** What sets these MACs apart from any other use of the origin's key (HKDF's `info`). */
const PURPOSE = encoder.encode("mcp-edge-rewriter: ids bound to a gate user, v1");
/** A MAC in base64url: 32 bytes of HMAC-SHA-256. */
const MAC_CHARS = 43;

/** The ids bound, by the header a client sends one back in; each kind's MACs its own. */
const KINDS = { session: "mcp-session-id", event: "last-event-id" } as const;
type Kind = keyof typeof KINDS;

export interface SessionBinding {
  /**
   * `request` with the origin's ids in place of those the client was handed;
   * the kind of one that is not an id the proxy bound to this user (another
   * user's, the origin's own, made up), which the origin must not see.
   */
  toOrigin<R extends Request>(request: R): Promise<{ request: R } | { refused: Kind }>;
  /** The origin's `response`, with the session id it names and its events' ids bound to this user. */
  toClient(response: Response): Response | Promise<Response>;
}

/** Whether `a` and `b` are one text, in time that does not tell where they differ. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let differ = 0;
  for (let i = 0; i < a.length; i++) differ |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return differ === 0;
}

/**
 * Session ids bound to `user` (who signed in: issuer and subject) under a key
 * derived from `credential`, the value the origin is sent for them.
 */
export function sessionBinding(credential: string, user: string): SessionBinding {
  // Derived when a MAC is first needed: most requests (2026-07-28's, without sessions) name no id.
  let key: Promise<CryptoKey> | undefined;
  const keyOf = () => {
    key ??= crypto.subtle
      .importKey("raw", encoder.encode(credential), "HKDF", false, ["deriveKey"])
      .then((base) =>
        crypto.subtle.deriveKey(
          { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: PURPOSE },
          base,
          { name: "HMAC", hash: "SHA-256", length: 256 },
          false,
          ["sign"],
        ),
      );
    return key;
  };
  // The kind and the user's length first: no kind, user and id run together into another's text.
  const macOf = async (kind: Kind, originId: string) =>
    base64url(
      new Uint8Array(
        await crypto.subtle.sign(
          "HMAC",
          await keyOf(),
          encoder.encode(`${kind}\n${user.length}:${user}${originId}`),
        ),
      ),
    );
  const bind = async (kind: Kind, originId: string) => `${originId}.${await macOf(kind, originId)}`;
  const unbind = async (kind: Kind, clientId: string) => {
    const dot = clientId.length - MAC_CHARS - 1;
    if (dot < 1 || clientId[dot] !== ".") return undefined;
    const originId = clientId.slice(0, dot);
    return sameText(await macOf(kind, originId), clientId.slice(dot + 1)) ? originId : undefined;
  };
  return {
    async toOrigin<R extends Request>(request: R) {
      let headers: Headers | undefined;
      for (const kind of ["session", "event"] as const) {
        const sent = request.headers.get(KINDS[kind]);
        // An empty one names nothing, as origins read it.
        if (sent === null || sent === "") continue;
        const originId = await unbind(kind, sent);
        if (originId === undefined) return { refused: kind };
        headers ??= new Headers(request.headers);
        headers.set(KINDS[kind], originId);
      }
      // The runtime's `cf` properties come along with the rest of the request.
      return { request: headers ? (new Request(request, { headers }) as R) : request };
    },
    async toClient(response) {
      const session = response.headers.get(KINDS.session);
      const events = streamOfEvents(response);
      if (!session && !events) return response;
      const headers = new Headers(response.headers);
      if (session) headers.set(KINDS.session, await bind("session", session));
      if (!events) return new Response(response.body, { ...statusLineOf(response), headers });
      headers.delete("content-length");
      const body = rewriteEventIds(events, (id) => bind("event", id));
      return new Response(body, { ...statusLineOf(response), headers });
    },
  };
}

/**
 * The body of `response` when it is an event stream the proxy can read: one
 * still in a coding the runtime did not decode (its label kept) goes as it is,
 * its ids unbound, which no client can then resume by.
 */
function streamOfEvents(response: Response): ReadableStream<Uint8Array> | null {
  if (mediaTypeOf(response.headers) !== "text/event-stream") return null;
  const coding = response.headers.get("content-encoding")?.trim().toLowerCase();
  return coding === undefined || coding === "identity" ? response.body : null;
}
