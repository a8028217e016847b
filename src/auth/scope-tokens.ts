/**
 * Which of the origin's scopes broker mode's step-up carries (step-up.ts),
 * and how the proxy names one among its own. Alone, with nothing imported:
 * `npm run client` (scripts/client.ts) reads the proxy's `insufficient_scope`
 * by the same rule, so its advice names every scope the proxy's challenge
 * does. Apart, the client bounded the whole `origin:<scope>` by the origin
 * scope's 128 characters, and left out those of 121 to 128.
 */

/** How the proxy names one of the origin's scopes among its own. */
export const ORIGIN_SCOPE_PREFIX = "origin:";
/** The most of the origin's scopes a challenge of the proxy's names, or a client may ask for. */
export const MAX_ORIGIN_SCOPES = 32;
/** The longest of the origin's scopes the proxy carries. */
export const MAX_SCOPE_LENGTH = 128;

/** RFC 6749 §3.3: `scope-token = 1*( %x21 / %x23-5B / %x5D-7E )`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/** Whether the proxy carries `scope`, one of the origin's as the origin writes it. */
export const isCarried = (scope: string) =>
  scope.length <= MAX_SCOPE_LENGTH && SCOPE_TOKEN.test(scope);

/**
 * The scopes a challenge's `scope` names that a client may print and ask
 * for: each a scope token the proxy carries, or the proxy's name of one,
 * `origin:<scope>` (the bound is its `<scope>`'s); at most
 * `MAX_ORIGIN_SCOPES`, as many as the proxy names. Any other token (a
 * server's text in a terminal) is left out.
 */
export const namedScopes = (challenged: string | undefined) =>
  (challenged ?? "")
    .split(" ")
    .filter((scope) =>
      isCarried(
        scope.startsWith(ORIGIN_SCOPE_PREFIX) ? scope.slice(ORIGIN_SCOPE_PREFIX.length) : scope,
      ),
    )
    .slice(0, MAX_ORIGIN_SCOPES);
