/**
 * What the official SDK clients read of a `WWW-Authenticate` header: the
 * `resource_metadata` URL each of their readers finds (1.x and 2.x, the
 * parameters and the metadata URL alone), the first `resource_metadata=` in
 * the header's text wherever it is.
 */
import {
  extractResourceMetadataUrl as modernMetadataUrl,
  extractWWWAuthenticateParams as modernParams,
} from "@modelcontextprotocol/client";
import {
  extractResourceMetadataUrl,
  extractWWWAuthenticateParams,
} from "@modelcontextprotocol/sdk/client/auth.js";

export function metadataUrlsReadBySdks(header: string): Array<string | undefined> {
  const answer = new Response(null, { status: 401, headers: { "www-authenticate": header } });
  return [
    extractWWWAuthenticateParams(answer).resourceMetadataUrl?.href,
    extractResourceMetadataUrl(answer)?.href,
    modernParams(answer).resourceMetadataUrl?.href,
    modernMetadataUrl(answer)?.href,
  ];
}
