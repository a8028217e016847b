/**
 * The request headers of MCP's Streamable HTTP transport from protocol
 * 2026-07-28 on (SEP-2243): `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` mirror
 * the body so intermediaries can route without parsing it, and the origin
 * rejects a request whose headers and body disagree. When the proxy changes
 * the body, it changes these headers to match.
 */
import { isPlainObject, own } from "../json";

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

/** What a forwarded `tools/call` implies for its headers. */
export interface CallHeaders {
  /** The tool's original name, for `Mcp-Name`. */
  name: string;
  /** The `Mcp-Param-*` headers the arguments imply; `undefined` when the tool's schema is unknown. */
  params: Array<[string, string]> | undefined;
}

const MAX_HEADER_DEPTH = 8;

/**
 * The `Mcp-Param-{Name}` headers a call's arguments imply: one per property
 * annotated `"x-mcp-header": "{Name}"` (reachable through `properties` only),
 * whose value is a string, an integer or a boolean. A `null` or absent value
 * has no header.
 */
export function paramHeaders(
  args: Record<string, unknown> | undefined,
  inputSchema: unknown,
): Array<[string, string]> {
  const headers: Array<[string, string]> = [];
  const walk = (value: unknown, schema: unknown, depth: number) => {
    if (depth > MAX_HEADER_DEPTH || !isPlainObject(value) || !isPlainObject(schema)) return;
    const properties = own(schema, "properties");
    if (!isPlainObject(properties)) return;
    for (const [key, propertySchema] of Object.entries(properties)) {
      if (!isPlainObject(propertySchema) || !Object.hasOwn(value, key)) continue;
      const child = value[key];
      const header = own(propertySchema, "x-mcp-header");
      const primitive =
        typeof child === "string" ||
        typeof child === "boolean" ||
        (typeof child === "number" && Number.isInteger(child));
      if (typeof header === "string" && primitive) {
        headers.push([`mcp-param-${header.toLowerCase()}`, encodeHeaderValue(String(child))]);
      }
      walk(child, propertySchema, depth + 1);
    }
  };
  walk(args, inputSchema, 0);
  return headers;
}

/**
 * Brings a lone `tools/call`'s 2026-07-28 headers in line with the body the
 * proxy forwards: `Mcp-Name` when the client sent one, and, for a client that
 * speaks these headers (it sent `Mcp-Method`), every `Mcp-Param-*` derived
 * again from the repaired arguments, when the tool's schema is known.
 */
export function alignCallHeaders(headers: Headers, call: CallHeaders): void {
  if (headers.has("mcp-name")) headers.set("mcp-name", encodeHeaderValue(call.name));
  if (!headers.has("mcp-method") || call.params === undefined) return;
  deleteParamHeaders(headers);
  for (const [name, value] of call.params) headers.set(name, value);
}

/** Makes headers copied from a client's request fit a request of another method. */
export function retargetHeaders(headers: Headers, method: string): void {
  headers.delete("mcp-name");
  deleteParamHeaders(headers);
  if (headers.has("mcp-method")) headers.set("mcp-method", method);
}

function deleteParamHeaders(headers: Headers): void {
  for (const name of [...headers.keys()]) if (name.startsWith("mcp-param-")) headers.delete(name);
}
