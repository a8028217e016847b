/**
 * Gate mode's sessions are their user's (SECURITY.md, "A session is its
 * user's"). The origin is reached with the proxy's key, the shared one every
 * user's requests carry alike: it cannot tell whose session an
 * `Mcp-Session-Id` is, and the SDK's transport serves whoever sends one. The
 * proxy, which signed the user in, is the server the client sees, and binds
 * the id to them, as MCP's security best practices ask of a server
 * ("Session Hijacking": `<user_id>:<session_id>`): the client is handed the
 * origin's id followed by a MAC of it and the user, and the origin gets back
 * only an id whose MAC is the sender's. No state: nothing is written or
 * remembered, so a session is the user's in every isolate and location.
 *
 * The MAC's key is derived (HKDF) from the credential the origin is sent for
 * the user, which only the proxy holds: no setting of its own, and changing
 * the origin's key ends the sessions bound under it (the client is told its
 * session is not found, and starts another, as after the origin's restart).
 */
import { base64url } from "../digest";
import { statusLineOf } from "../transport/origin";

const encoder = new TextEncoder();

/** What sets these MACs apart from any other use of the origin's key (HKDF's `info`). */
const PURPOSE = encoder.encode("mcp-edge-rewriter: Mcp-Session-Id bound to a gate user, v1");
/** A MAC in base64url: 32 bytes of HMAC-SHA-256. */
const MAC_CHARS = 43;

const SESSION = "mcp-session-id";

export interface SessionBinding {
  /**
   * `request` with the origin's session id in place of the id the client was
   * handed; `undefined` when that id is not one the proxy bound to this user
   * (another user's, the origin's own, made up): the origin must not see it.
   */
  toOrigin<R extends Request>(request: R): Promise<R | undefined>;
  /** The origin's `response`, with the session id it names bound to this user. */
  toClient(response: Response): Promise<Response>;
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
export async function sessionBinding(credential: string, user: string): Promise<SessionBinding> {
  const base = await crypto.subtle.importKey("raw", encoder.encode(credential), "HKDF", false, [
    "deriveKey",
  ]);
  const key = await crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: PURPOSE },
    base,
    { name: "HMAC", hash: "SHA-256", length: 256 },
    false,
    ["sign"],
  );
  // The user's length first: no user and id run together into another pair's text.
  const macOf = async (originId: string) =>
    base64url(
      new Uint8Array(
        await crypto.subtle.sign("HMAC", key, encoder.encode(`${user.length}:${user}${originId}`)),
      ),
    );
  const unbind = async (clientId: string) => {
    const dot = clientId.length - MAC_CHARS - 1;
    if (dot < 1 || clientId[dot] !== ".") return undefined;
    const originId = clientId.slice(0, dot);
    return sameText(await macOf(originId), clientId.slice(dot + 1)) ? originId : undefined;
  };
  return {
    async toOrigin<R extends Request>(request: R) {
      const sent = request.headers.get(SESSION);
      // An empty one names no session, as origins read it.
      if (sent === null || sent === "") return request;
      const originId = await unbind(sent);
      if (originId === undefined) return undefined;
      const headers = new Headers(request.headers);
      headers.set(SESSION, originId);
      // The runtime's `cf` properties come along with the rest of the request.
      return new Request(request, { headers }) as R;
    },
    async toClient(response) {
      const originId = response.headers.get(SESSION);
      if (originId === null || originId === "") return response;
      const headers = new Headers(response.headers);
      headers.set(SESSION, `${originId}.${await macOf(originId)}`);
      return new Response(response.body, { ...statusLineOf(response), headers });
    },
  };
}
