/**
 * `POST /oauth/sign-out`, gate mode: signs the user out of every app they
 * connected through this proxy. The request carries one of the user's
 * access tokens (`Authorization: Bearer`); every grant of that user (the
 * identity the provider vouched for, whichever app it was made for) is
 * revoked, at most `MAX_GRANTS` of them, with their tokens. To end one
 * app's access only, revoke its token at the token endpoint (RFC 7009,
 * `revocation_endpoint` in the proxy's metadata). Nothing is logged of the
 * token or the user.
 */
import type { OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import type { Context } from "hono";
import { bearerToken } from "../auth/bearer";
import { logEvent } from "../log";
import type { AppEnv } from "./app-env";

const PAGE = 100;
const MAX_GRANTS = 1000;

const refused = (status: number, error: string, description: string) =>
  Response.json(
    { error, error_description: description },
    {
      status,
      headers: {
        "cache-control": "no-store",
        ...(status === 401 ? { "www-authenticate": `Bearer error="${error}"` } : {}),
      },
    },
  );

export async function signOut(c: Context<AppEnv>): Promise<Response> {
  const helpers = (c.env as Env & { OAUTH_PROVIDER?: OAuthHelpers }).OAUTH_PROVIDER;
  if (c.get("config").auth.mode !== "gate" || !helpers) {
    return Response.json({ error: "Sign-out exists in gate mode only" }, { status: 404 });
  }
  // Read as the MCP endpoint reads it: a header it would refuse signs no one out.
  const token = bearerToken(c.req.header("authorization"));
  if (token === undefined) {
    return refused(401, "invalid_request", "Send one of your access tokens as a Bearer token");
  }
  const summary = await helpers.unwrapToken(token).catch(() => null);
  if (!summary) return refused(401, "invalid_token", "The token is not a valid access token");
  let revoked = 0;
  let cursor: string | undefined;
  try {
    do {
      const page = await helpers.listUserGrants(summary.userId, { limit: PAGE, cursor });
      await Promise.all(page.items.map((grant) => helpers.revokeGrant(grant.id, summary.userId)));
      revoked += page.items.length;
      cursor = page.cursor;
    } while (cursor !== undefined && revoked < MAX_GRANTS);
  } catch {
    // KV failed: some grants may be revoked already; signing out again revokes the rest.
    // Its message is not logged: it may name a grant's key.
    logEvent("sign_out_failed", { grants: revoked });
    const answer = refused(
      503,
      "temporarily_unavailable",
      "The proxy could not sign you out of every app now; try again",
    );
    answer.headers.set("retry-after", "5");
    return answer;
  }
  logEvent("signed_out", { grants: revoked });
  return Response.json({ revoked }, { headers: { "cache-control": "no-store" } });
}
