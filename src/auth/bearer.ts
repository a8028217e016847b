/**
 * The proxy's token in a request's `Authorization`, read as
 * workers-oauth-provider reads it on the MCP endpoint (one `Bearer` token:
 * the scheme in any case, then spaces or tabs, then the token, nothing
 * after it; two headers, joined by a comma, carry none). Every route that
 * reads the token itself reads it so, and acts on no token the MCP
 * endpoint would refuse.
 */
export function bearerToken(authorization: string | null | undefined): string | undefined {
  return /^Bearer[\t ]+([^\s,]+)$/i.exec(authorization ?? "")?.[1];
}
