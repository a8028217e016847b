/**
 * The request headers of MCP's Streamable HTTP transport from protocol
 * 2026-07-28 on (SEP-2243): `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` mirror
 * the body so intermediaries can route without parsing it, and the origin
 * rejects a request whose headers and body disagree. When the proxy changes
 * the body, it changes these headers to match.
 *
 * `Mcp-Param-*` follow the official SDK 2.x's codec, since its server is what
 * checks them: the declarations its server checks (`x-mcp-header` on
 * properties reachable through `properties` alone, `number` ones included,
 * which the specification does not admit but the server still checks; none at
 * all for a schema it finds invalid otherwise), and each value written as its
 * client writes it (no header for `null`, an absent value, an object, a
 * non-finite number or an integer beyond 2^53; the `=?base64?…?=` form for
 * text that is not a plain header value).
 */
import { isPlainObject, numberText, own } from "../json";
import { MAX_NESTING } from "../json-spans";
import type { JsonRpcMessage } from "./jsonrpc";

const SENTINEL_PREFIX = "=?base64?";
const SENTINEL_SUFFIX = "?=";

/** Whether `value` cannot go as a plain header value (RFC 9110 §5.5), or would read as the sentinel. */
function needsBase64(value: string): boolean {
  if (value.length === 0 || value !== value.trim()) return true;
  if (value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX)) return true;
  return !/^[\t\x20-\x7e]*$/.test(value);
}

/** A value as a header carries it: as is, or `=?base64?<UTF-8 bytes, standard base64>?=`. */
export function encodeHeaderValue(value: string): string {
  if (!needsBase64(value)) return value;
  let binary = "";
  for (const byte of new TextEncoder().encode(value)) binary += String.fromCharCode(byte);
  return `${SENTINEL_PREFIX}${btoa(binary)}${SENTINEL_SUFFIX}`;
}

/**
 * Standard base64 as the SDK's server takes it: padded, nothing else in it.
 * `atob` also reads it unpadded and with whitespace, which that server refuses.
 */
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * A header value as the SDK's server reads it: the `=?base64?…?=` form
 * decoded (a leading BOM dropped, as its `TextDecoder` drops it);
 * `undefined` when it refuses it, as the proxy then does.
 */
function decodeHeaderValue(value: string): string | undefined {
  if (!value.startsWith(SENTINEL_PREFIX) || !value.endsWith(SENTINEL_SUFFIX)) return value;
  const encoded = value.slice(SENTINEL_PREFIX.length, -SENTINEL_SUFFIX.length);
  if (!CANONICAL_BASE64.test(encoded)) return undefined;
  try {
    const bytes = Uint8Array.from(atob(encoded), (char) => char.charCodeAt(0));
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * Where a request's `Mcp-Name` comes from in its params: SEP-2243's, and
 * SEP-2663's for tasks, whose requests a gateway routes by it to the
 * instance holding the task (the SDK 2.x server checks these too).
 */
export const NAMED_BY: Readonly<Record<string, "name" | "uri" | "taskId">> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri",
  "resources/subscribe": "uri",
  "resources/unsubscribe": "uri",
  "tasks/get": "taskId",
  "tasks/update": "taskId",
  "tasks/cancel": "taskId",
};

/**
 * Which of a client's `Mcp-Method` and `Mcp-Name` headers disagrees with the
 * lone request of its body; `undefined` when none does. The origin refuses
 * such a request (SEP-2243), and so does the proxy: it brings `Mcp-Name` in
 * line with the body it forwards (`alignCallHeaders`), which would hand the
 * origin, and anything after the proxy, headers that agree with a body they
 * did not describe, while whatever stands before the proxy read them.
 */
export function headerMismatch(
  headers: Headers,
  message: JsonRpcMessage | undefined,
): string | undefined {
  const bodyMethod = message && "method" in message ? message.method : undefined;
  if (typeof bodyMethod !== "string") return undefined;
  const method = headers.get("mcp-method");
  if (method !== null && method !== bodyMethod) return "Mcp-Method";
  const header = headers.get("mcp-name");
  const member = Object.hasOwn(NAMED_BY, bodyMethod) ? NAMED_BY[bodyMethod] : undefined;
  if (header === null || member === undefined) return undefined;
  const params = message?.params;
  const named = isPlainObject(params) ? own(params, member) : undefined;
  // A body that names nothing gets no header aligned to it: the origin judges the pair as sent.
  if (named === undefined) return undefined;
  return decodeHeaderValue(header) === named ? undefined : "Mcp-Name";
}

/**
 * Which of `Mcp-Method`, `Mcp-Name` and an `Mcp-Param-*` header a batch
 * carries (2025-03-26 alone has batches); `undefined` when none. Each names
 * one request: beside many, it names none of them, and a gateway after the
 * proxy that routes or allows by it would judge the batch by a request it
 * does not hold.
 */
export function batchHeader(headers: Headers): string | undefined {
  for (const name of headers.keys()) {
    if (name === "mcp-method") return "Mcp-Method";
    if (name === "mcp-name") return "Mcp-Name";
    if (name.startsWith("mcp-param-")) return "Mcp-Param-*";
  }
  return undefined;
}

/** What a forwarded `tools/call` implies for its headers. */
export interface CallHeaders {
  /** The tool's original name, for `Mcp-Name`. */
  name: string;
  /**
   * The `Mcp-Param-*` header of each parameter the tool's schema declares
   * one for, with the value the arguments imply (`undefined`: no header);
   * `undefined` when the tool's schema is unknown.
   */
  params: ParamHeader[] | undefined;
  /**
   * Those of `params` whose argument the operator's rules set whatever the
   * model sent (docs/rules.md, `fixed`): the proxy's to write. A client's
   * header for one mirrors the model's value, which the body no longer holds.
   */
  setByRules?: ReadonlySet<string>;
}

/** RFC 9110 §5.1 `token`: what a header name may be made of. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const CHECKED_TYPES = new Set(["string", "integer", "boolean", "number"]);
/** Subschemas outside the `properties` chain: a declaration there makes the schema invalid. */
const UNREACHABLE = [
  "items",
  "prefixItems",
  "contains",
  "additionalProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "propertyNames",
  "patternProperties",
  "dependentSchemas",
  "oneOf",
  "anyOf",
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "$defs",
  "definitions",
];
const NAMED_SUBSCHEMAS = new Set(["patternProperties", "dependentSchemas", "$defs", "definitions"]);
/** The types a client takes a declaration on (SEP-2243): not `number`, which the SDK's server still checks. */
const CLIENT_TYPES = new Set(["string", "integer", "boolean"]);

/**
 * Whether a client of 2026-07-28 refuses the `x-mcp-header` that `node`
 * declares, by what the node itself says: a value that is no header name, or
 * a property typed other than `string`, `integer` or `boolean` (`number`, a
 * list such as `["string", "null"]`, or none: pydantic's optional is an
 * `anyOf` with `null`). Such a client (the SDK 2.x client, the AI SDK)
 * leaves the whole tool out of its listing, and says so nowhere but a log.
 */
export function declarationRefused(node: Record<string, unknown>): boolean {
  const header = own(node, "x-mcp-header");
  const type = own(node, "type");
  return (
    typeof header !== "string" ||
    !TOKEN.test(header) ||
    typeof type !== "string" ||
    !CLIENT_TYPES.has(type)
  );
}
/**
 * Deeper than any path through a schema the proxy holds (read within
 * `MAX_NESTING` levels): the SDK's server checks declarations at any depth,
 * and a schema the walk stopped short of would count as declaring none, so
 * the client's headers were deleted and the origin refused the call.
 */
const MAX_SCHEMA_DEPTH = MAX_NESTING;

interface Declaration {
  path: string[];
  header: string;
  /** Declared `integer` or `number`: the origin compares a number with the header as numbers. */
  numeric: boolean;
}

/** The declarations the origin checks; none for a schema it finds invalid (it then checks none). */
function declarationsOf(inputSchema: unknown): Declaration[] {
  const found: Declaration[] = [];
  const names = new Set<string>();
  const visit = (node: unknown, path: string[], reachable: boolean): boolean => {
    if (path.length > MAX_SCHEMA_DEPTH) return false;
    if (!isPlainObject(node)) return true;
    if (Object.hasOwn(node, "x-mcp-header")) {
      const header = node["x-mcp-header"];
      const type = own(node, "type");
      if (!reachable || path.length === 0 || typeof header !== "string" || !TOKEN.test(header)) {
        return false;
      }
      if (typeof type !== "string" || !CHECKED_TYPES.has(type)) return false;
      if (names.has(header.toLowerCase())) return false;
      names.add(header.toLowerCase());
      found.push({ path, header, numeric: type === "integer" || type === "number" });
    }
    const properties = own(node, "properties");
    if (isPlainObject(properties)) {
      for (const [key, child] of Object.entries(properties)) {
        if (!visit(child, [...path, key], reachable)) return false;
      }
    }
    for (const keyword of UNREACHABLE) {
      const sub = own(node, keyword);
      if (sub === undefined) continue;
      const branches = Array.isArray(sub)
        ? sub
        : NAMED_SUBSCHEMAS.has(keyword) && isPlainObject(sub)
          ? Object.values(sub)
          : [sub];
      for (const branch of branches) if (!visit(branch, [...path, keyword], false)) return false;
    }
    return true;
  };
  return visit(inputSchema, [], true) ? found : [];
}

const declarations = new WeakMap<object, Declaration[]>();

function declarationsFor(inputSchema: unknown): Declaration[] {
  if (!isPlainObject(inputSchema)) return [];
  let known = declarations.get(inputSchema);
  if (!known) {
    known = declarationsOf(inputSchema);
    declarations.set(inputSchema, known);
  }
  return known;
}

/** A primitive as the SDK client writes it in a header; `undefined`: no header. */
function headerText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value !== "number" || !Number.isFinite(value)) return undefined;
  if (Number.isInteger(value) && !Number.isSafeInteger(value)) return undefined;
  return String(value);
}

/**
 * A parameter's header and the value the arguments imply (`undefined`: no
 * header); third, the number itself where the declaration is `integer` or
 * `number` and the value a number, which the origin compares as a number;
 * fourth, for an integer past 2^53 - 1, which gets no header, the digits the
 * body writes it with, which a header the client sent must say.
 */
export type ParamHeader = [
  name: string,
  value: string | undefined,
  number?: number,
  written?: string,
];

const headerName = (header: string) => `mcp-param-${header.toLowerCase()}`;

/** The `Mcp-Param-{Name}` header of each parameter `inputSchema` declares one for, and the value a call's arguments imply. */
export function paramHeaders(
  args: Record<string, unknown> | undefined,
  inputSchema: unknown,
): ParamHeader[] {
  return declarationsFor(inputSchema).map(({ path, header, numeric }) => {
    let holder: unknown;
    let value: unknown = args;
    for (const key of path) {
      holder = value;
      value = isPlainObject(value) ? own(value, key) : undefined;
    }
    const text = value === null ? undefined : headerText(value);
    const name = headerName(header);
    if (text === undefined && typeof value === "number" && Number.isInteger(value)) {
      // `"9007199254740993"` made a number is written with those digits (args/coerce.ts).
      const written = numberText(holder as object, path.at(-1) as string, value, undefined);
      return [name, undefined, value, written];
    }
    if (text === undefined) return [name, undefined];
    return numeric && typeof value === "number"
      ? [name, encodeHeaderValue(text), value]
      : [name, encodeHeaderValue(text)];
  });
}

/**
 * The `Mcp-Param-{Name}` headers `inputSchema` declares for the arguments
 * `chosen` names (a top-level key), or for a value inside one.
 */
export function headersUnder(
  inputSchema: unknown,
  chosen: (argument: string) => boolean,
): Set<string> {
  const names = new Set<string>();
  for (const { path, header } of declarationsFor(inputSchema)) {
    if (chosen(path[0] as string)) names.add(headerName(header));
  }
  return names;
}

/** The decimals the SDK's server reads as a number: `42`, `42.0`, `042`, `-1.50`. */
const DECIMAL = /^-?\d+(?:\.\d+)?$/;

/**
 * Whether a header the client sent says what a parameter's forwarded value
 * does: the same text once decoded, or, for a number the schema declares an
 * `integer` or `number`, the same number (the specification's "42.0 and 42
 * agree", as the SDK's server compares them); for an integer past 2^53 - 1,
 * which a double may round, the digits the body writes it with.
 */
function agrees(sent: string, [, value, number, written]: ParamHeader): boolean {
  const decoded = decodeHeaderValue(sent);
  if (decoded === undefined) return false;
  if (value === undefined) return written !== undefined && decoded === written;
  if (decoded === decodeHeaderValue(value)) return true;
  return number !== undefined && DECIMAL.test(decoded) && Number(decoded) === number;
}

/**
 * The first `Mcp-Param-*` header the client wrote for a declared parameter
 * (beside `Mcp-Method`, or the request was refused unread:
 * request-reading.ts), that the arguments the proxy
 * forwards disagree with (another value, or none: `agrees`); `undefined` when none
 * does. Refused as `headerMismatch` is: written again from the body, the
 * header would have the origin act on a value a gateway before the proxy
 * never saw. A header the client did not send is the proxy's to write, and so
 * is one of an argument the operator's rules set (`setByRules`): the body
 * holds the operator's value whatever the client wrote, in header or body, so
 * the header is written again from it, never refused (the call would fail
 * for every client that mirrors the model's value, one whose listing
 * predates the rule among them).
 */
export function paramMismatch(headers: Headers, call: CallHeaders): string | undefined {
  if (call.params === undefined) return undefined;
  for (const param of call.params) {
    const sent = headers.get(param[0]);
    if (sent === null || call.setByRules?.has(param[0])) continue;
    if (!agrees(sent, param)) return param[0];
  }
  return undefined;
}

/**
 * Whether a request's `Mcp-Param-*` headers are checked against its call's
 * arguments (`paramMismatch`): the client sent some.
 */
export function sendsParamHeaders(headers: Headers): boolean {
  for (const name of headers.keys()) if (name.startsWith("mcp-param-")) return true;
  return false;
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
  for (const [name, value] of call.params) if (value !== undefined) headers.set(name, value);
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
