/**
 * Broker mode's step-up authorization (MCP 2025-11-25, "Scope Challenge
 * Handling"; RFC 6750 §3.1). The origin answers the token the proxy signed in
 * for `403` with `error="insufficient_scope"` and the `scope` the request
 * needs. The client talks OAuth to the proxy, never to the origin's
 * authorization server, so the origin's challenge means nothing to it as it
 * came: the proxy answers with its own `403`, naming the scopes as its own,
 * `origin:<scope>`, and a sign-in at the proxy that asks for those asks the
 * origin's authorization server for them (routes/authorize.ts), beside the
 * scopes the origin's metadata names. Before, the client signed in again for
 * the origin's names, which the proxy did not read, and met the same `403`.
 *
 * - Only scopes written `origin:<scope>` carry: any other a client asks the
 *   proxy for grants nothing, as before, and never reaches the origin's
 *   authorization server, which may refuse a scope it does not know.
 * - The proxy's challenge names the grant's own `origin:` scopes with those
 *   the origin's names: the origin names what this request needs (RFC 6750
 *   §3.1), and a client that asks for the challenge's scopes alone (the
 *   2025-11-25 revision's) would lose what it had. A client that takes the
 *   union itself (SEP-2350) asks for the same.
 * - A token of the proxy's names only those of the origin's scopes the
 *   origin's authorization server granted (its token answer's `scope`, at
 *   sign-in and at each refresh that names one): a user may untick a scope
 *   there, or its policy refuse one, and a client told it holds a scope its
 *   origin token lacks would meet the origin's `403` naming it, sign in
 *   again, and meet it again.
 * - Bounded (scope-tokens.ts): only scope tokens of RFC 6749 §3.3, of at
 *   most `MAX_SCOPE_LENGTH` characters, at most `MAX_ORIGIN_SCOPES` named or
 *   asked for; whatever an origin's challenges name, a grant's scopes do not
 *   grow past that.
 *
 * Pure, but for the response it builds.
 */
import { quote } from "./challenges";
import type { PublicUrls } from "./public-url";
import { isCarried, MAX_ORIGIN_SCOPES, ORIGIN_SCOPE_PREFIX } from "./scope-tokens";

const once = (scopes: Iterable<string>) => [...new Set(scopes)];

/** The origin's scopes among the proxy's `scopes`: those written `origin:<scope>`, unprefixed. */
export const originScopesIn = (scopes: readonly string[]) =>
  once(
    scopes
      .filter((scope) => scope.startsWith(ORIGIN_SCOPE_PREFIX))
      .map((scope) => scope.slice(ORIGIN_SCOPE_PREFIX.length)),
  );

/**
 * The origin's scopes a client asks the proxy for in its authorization
 * request (`scope`, split), each once; `undefined` where it asks for one that
 * is no scope token or longer than `MAX_SCOPE_LENGTH`, or for more than
 * `MAX_ORIGIN_SCOPES` (its request is `invalid_scope`).
 */
export function askedOriginScopes(requested: readonly string[]): string[] | undefined {
  const asked = originScopesIn(requested);
  return asked.length <= MAX_ORIGIN_SCOPES && asked.every(isCarried) ? asked : undefined;
}

/**
 * Of `carried` (the origin's scopes a grant of the proxy's names), those the
 * origin's authorization server granted, by the `scope` of its token answer
 * (RFC 6749 §5.1: the scope granted, where it differs from the one asked);
 * `undefined` where the answer names none: as asked.
 */
export function grantedAtOrigin(
  carried: readonly string[],
  scope: string | undefined,
): string[] | undefined {
  if (scope === undefined) return undefined;
  const granted = new Set(scope.split(" "));
  return carried.filter((item) => granted.has(item));
}

/**
 * The proxy's `scopes` without the origin's it names that the origin's
 * authorization server did not grant (`granted`, unprefixed); all of them
 * where it said nothing. A token of the proxy's claims no scope of the
 * origin's the origin's own token lacks.
 */
export function withoutWithheld(
  scopes: readonly string[],
  granted: readonly string[] | undefined,
): string[] {
  if (granted === undefined) return [...scopes];
  return scopes.filter(
    (scope) =>
      !scope.startsWith(ORIGIN_SCOPE_PREFIX) ||
      granted.includes(scope.slice(ORIGIN_SCOPE_PREFIX.length)),
  );
}

/** Of `carried` (the origin's scopes, unprefixed), those its authorization server did not grant (`granted`). */
export const withheldAtOrigin = (
  carried: readonly string[],
  granted: readonly string[] | undefined,
) => (granted === undefined ? [] : carried.filter((scope) => !granted.includes(scope)));

/**
 * The proxy's scopes its challenge names for the origin's `insufficient_scope`
 * naming `challenged` (the challenge's `scope`), to a grant of the proxy's
 * scopes `granted`: the grant's `origin:` scopes, then the origin's; the
 * origin's first when not all fit in `MAX_ORIGIN_SCOPES`, as they are what
 * this request needs. `undefined` where the origin names no scope the proxy
 * carries: a sign-in could ask for nothing more.
 */
export function stepUpScopes(
  granted: readonly string[],
  challenged: string | undefined,
): string[] | undefined {
  const needed = once((challenged ?? "").split(" ").filter(isCarried)).slice(0, MAX_ORIGIN_SCOPES);
  if (needed.length === 0) return undefined;
  const held = originScopesIn(granted)
    .filter((scope) => isCarried(scope) && !needed.includes(scope))
    .slice(0, MAX_ORIGIN_SCOPES - needed.length);
  return [...held, ...needed].map((scope) => `${ORIGIN_SCOPE_PREFIX}${scope}`);
}

/** What the proxy's challenge says of the scopes it names. */
const STEP_UP_DESCRIPTION =
  "The origin needs permissions this sign-in lacks; sign in again for the scopes named";

/**
 * The proxy's own `403 insufficient_scope` (RFC 6750 §3.1), naming `scopes`
 * (its own) and its metadata: the client signs in again asking for them.
 */
export function stepUpChallenge(urls: PublicUrls, scopes: readonly string[]): Response {
  const challenge = `Bearer realm="OAuth", error="insufficient_scope", scope=${quote(scopes.join(" "))}, resource_metadata=${quote(urls.metadata)}, error_description=${quote(STEP_UP_DESCRIPTION)}`;
  return Response.json(
    { error: "insufficient_scope", error_description: STEP_UP_DESCRIPTION },
    { status: 403, headers: { "www-authenticate": challenge } },
  );
}
