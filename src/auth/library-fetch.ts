/**
 * workers-oauth-provider fetches a client's Client ID Metadata Document (a
 * `client_id` that is an https URL, at `/authorize` and the token endpoint)
 * with the runtime's `fetch` and no `redirect`, so the runtime's default
 * follows redirects: a document URL that redirected to itself was 21
 * requests to hosts the client chose for each lookup, and a consent page
 * looks its client up twice (42 for one request). The draft takes a `200`
 * alone, no redirect (draft-ietf-oauth-client-id-metadata-document, Client
 * Information Discovery), and the library offers no `fetch` of its own.
 *
 * So while the proxy answers a request, a `fetch` that says nothing of
 * redirects is made with `redirect: "manual"`: a 3xx is then an answer that
 * is not `200`, and the client is unknown. Every request of the proxy's own
 * says how it takes a redirect (`manual`: transport/origin.ts, oauth4webapi,
 * auth/idp-github.ts), and so is not changed; nor is any `fetch` outside a
 * request of the proxy (a test's own).
 */
import { AsyncLocalStorage } from "node:async_hooks";

const answering = new AsyncLocalStorage<true>();
const GUARDED = Symbol.for("mcp-edge-rewriter/redirects-guarded");

type Fetch = typeof fetch & { [GUARDED]?: true };

/** `inner`, its requests in a request of the proxy's that say nothing of redirects made with `manual`. */
function guarded(inner: typeof fetch): Fetch {
  const outer: Fetch = (input, init) => {
    const unsaid = !(input instanceof Request) && init?.redirect === undefined;
    return answering.getStore() && unsaid
      ? inner(input, { ...init, redirect: "manual" })
      : inner(input, init);
  };
  outer[GUARDED] = true;
  return outer;
}

/**
 * `run`, its `fetch` calls that say nothing of redirects made with `redirect: "manual"`. The
 * guard is put in place before each request, not once: whatever replaced `fetch` since (a
 * test's spy) is guarded in turn.
 */
export function withRedirectsRefused<T>(run: () => T): T {
  const current = globalThis.fetch as Fetch;
  if (!current[GUARDED]) globalThis.fetch = guarded(current);
  return answering.run(true, run);
}
