/**
 * The request headers of MCP's Streamable HTTP transport from protocol
 * 2026-07-28 on (SEP-2243): `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` mirror
 * the body so intermediaries can route without parsing it, and the origin
 * rejects a request whose headers and body disagree. When the proxy changes
 * the body, it changes these headers to match.
 */
const SENTINEL = /^=\?base64\?.*\?=$/s;

/**
 * A value as a header carries it: as is when it is printable ASCII without
 * surrounding whitespace, otherwise `=?base64?<UTF-8 bytes, standard base64>?=`
 * (also when the plain value would look like that form).
 */
export function encodeHeaderValue(value: string): string {
  const plain = /^[\x20-\x7e]*$/.test(value) && value.trim() === value && !SENTINEL.test(value);
  if (plain) return value;
  let binary = "";
  for (const byte of new TextEncoder().encode(value)) binary += String.fromCharCode(byte);
  return `=?base64?${btoa(binary)}?=`;
}
