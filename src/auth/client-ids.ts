/**
 * The client IDs broker and gate mode's authorization server takes from a
 * request, checked before workers-oauth-provider reads them. The library
 * resolves an ID that is an https URL with a path as a Client ID Metadata
 * Document, and where it cannot (no host serves it, or the ID is no URL the
 * draft allows) it writes the ID itself, whole, past the proxy's log
 * (`console.warn("CIMD fetch failed for <client_id>: …")`): as long as the
 * client made it (a token request's form is read to 64 KiB) and with its
 * control characters raw, which a terminal following `wrangler tail` acts on.
 * log.ts writes that line as the proxy's own (`library_line`), escaped and
 * within a line's bound; and such an ID never reaches the library, which
 * would ask a host for it: one longer than `MAX_DOCUMENT_CLIENT_ID_CHARS`, or
 * with a character no URL's text holds, is refused as an unknown client is,
 * and logged as the proxy's own line, which writes no part of it.
 *
 * The library takes a client ID from `/authorize`'s query (`client_id`, read
 * by routes/authorize.ts through `parseAuthRequest`) and, at the token
 * endpoint (revocations too), from the form's `client_id`, HTTP Basic
 * credentials, or a client assertion's unverified `iss`. It reads none from a
 * registration (it makes the ID), and the rest of sign-in reads the ID the
 * consent transaction or grant keeps, which `/authorize` checked.
 */
import { logEvent } from "../log";
import { AUTHORIZE_PATH, TOKEN_PATH } from "./provider";

/**
 * The longest client ID of metadata-document shape the library is handed.
 * Clients' document URLs are under 100 characters; at 512, the library's
 * line for one it could not resolve stays within some 6 KiB (the URL twice,
 * and what it quotes of a document, which it reads to 5 KiB).
 */
export const MAX_DOCUMENT_CLIENT_ID_CHARS = 512;

/** A URL's text (RFC 3986; WHATWG's serialization too): visible ASCII, anything else percent-encoded. */
const URL_TEXT = /^[\x21-\x7e]*$/;

type ReadFrom = "query" | "client_id" | "basic" | "client_assertion";

interface Refusal {
  reason: "length" | "characters";
  from: ReadFrom;
  length: number;
}

/**
 * Whether the library would resolve `clientId` as a metadata document: what
 * the URL parser reads as https (the library asks a path too; an https ID
 * without one is no client of the proxy's either). The parser drops leading
 * controls and spaces, so the ID's first characters cannot tell.
 */
function namesDocument(clientId: string): boolean {
  try {
    return new URL(clientId).protocol === "https:";
  } catch {
    return false;
  }
}

function refusalOf(clientId: string, from: ReadFrom): Refusal | undefined {
  if (!namesDocument(clientId)) return undefined;
  const { length } = clientId;
  if (length > MAX_DOCUMENT_CLIENT_ID_CHARS) return { reason: "length", from, length };
  if (!URL_TEXT.test(clientId)) return { reason: "characters", from, length };
  return undefined;
}

/** What the client is told: the rule its ID broke, none of the ID. */
function described({ reason }: Refusal): string {
  return reason === "length"
    ? `The client_id names a Client ID Metadata Document by a URL longer than ${MAX_DOCUMENT_CLIENT_ID_CHARS} characters, the longest this server takes`
    : "The client_id names a Client ID Metadata Document by a URL with a character no URL's text holds (a control character, a space, one outside ASCII): percent-encode it";
}

function logged(path: string, refusal: Refusal): void {
  logEvent("client_id_refused", { path, ...refusal });
}

/**
 * Why `/authorize` at `url` may not be handed to the library (said as the
 * page for an unknown client says it, routes/authorize.ts), logged; else `undefined`.
 */
export function authorizeClientIdRefused(url: URL): string | undefined {
  for (const clientId of url.searchParams.getAll("client_id")) {
    const refusal = refusalOf(clientId, "query");
    if (refusal) {
      logged(AUTHORIZE_PATH, refusal);
      return described(refusal);
    }
  }
  return undefined;
}

/**
 * Basic credentials' client ID, read as the library reads it (RFC 6749 §2.3.1), or `undefined`:
 * the scheme up to the first space or tab, the rest trimmed as `String.prototype.trim` does,
 * which takes a vertical tab or a no-break space (no HTTP whitespace) for one. A stricter
 * reading left `Basic \v<credentials>` unread here and read there.
 */
function basicClientId(header: string | null): string | undefined {
  if (!header) return undefined;
  const schemeEnd = header.search(/[ \t]/);
  if (schemeEnd === -1 || header.slice(0, schemeEnd).toLowerCase() !== "basic") return undefined;
  const encoded = header.slice(schemeEnd).trim();
  if (encoded === "" || /[ \t]/.test(encoded)) return undefined;
  try {
    const credentials = atob(encoded);
    const colon = credentials.indexOf(":");
    if (colon === -1) return undefined;
    return decodeURIComponent(credentials.slice(0, colon).replaceAll("+", " "));
  } catch {
    return undefined;
  }
}

/**
 * A client assertion's `iss`, unverified, as the library reads it to find
 * the client when the form names none (RFC 7523 §3), or `undefined`.
 */
function assertionIssuer(assertion: string): string | undefined {
  const payload = assertion.split(".")[1];
  if (payload === undefined) return undefined;
  try {
    const bytes = Uint8Array.from(atob(payload.replaceAll("-", "+").replaceAll("_", "/")), (char) =>
      char.charCodeAt(0),
    );
    const claims: unknown = JSON.parse(new TextDecoder().decode(bytes));
    const iss =
      typeof claims === "object" && claims !== null ? Reflect.get(claims, "iss") : undefined;
    return typeof iss === "string" ? iss : undefined;
  } catch {
    return undefined;
  }
}

/** The client IDs a token request names, wherever the library may read one. */
async function tokenClientIds(request: Request): Promise<Array<[string, ReadFrom]>> {
  const named: Array<[string, ReadFrom]> = [];
  const basic = basicClientId(request.headers.get("authorization"));
  if (basic !== undefined) named.push([basic, "basic"]);
  const type = (request.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
  // The library reads no other body; its own `400` answers one.
  if (type !== "application/x-www-form-urlencoded") return named;
  const form = await request
    .clone()
    .formData()
    .catch(() => undefined);
  for (const value of form?.getAll("client_id") ?? []) {
    if (typeof value === "string") named.push([value, "client_id"]);
  }
  for (const value of form?.getAll("client_assertion") ?? []) {
    const iss = typeof value === "string" ? assertionIssuer(value) : undefined;
    if (iss !== undefined) named.push([iss, "client_assertion"]);
  }
  return named;
}

/**
 * The token endpoint's answer to `request` (its body read within its bound,
 * sign-in-body.ts) when it names a client ID the library may not be handed:
 * `401 invalid_client`, as for a client no one registered (RFC 6749 §5.2,
 * with the Basic challenge where the client sent Basic credentials), logged;
 * else `undefined`.
 */
export async function tokenClientIdRefused(request: Request): Promise<Response | undefined> {
  if (request.method !== "POST" || new URL(request.url).pathname !== TOKEN_PATH) return undefined;
  for (const [clientId, from] of await tokenClientIds(request)) {
    const refusal = refusalOf(clientId, from);
    if (!refusal) continue;
    logged(TOKEN_PATH, refusal);
    const headers = new Headers({ "cache-control": "no-store" });
    if (from === "basic") headers.set("www-authenticate", 'Basic realm="OAuth"');
    return Response.json(
      { error: "invalid_client", error_description: described(refusal) },
      { status: 401, headers },
    );
  }
  return undefined;
}
