/**
 * What docs/errors.md says the proxy answers a request with, worked out from
 * the table rather than from the code, for generated requests
 * (test/worker/fuzz.test.ts): where the two part, one of them is wrong. And
 * what a client reads in an answer.
 */
import { objectsKeys } from "./json-writer";

/** The revision an unread request speaks (its header, in the date form), as errors write an unknown id. */
export function headerRevision(headers: Headers): string {
  const claim = headers.get("mcp-protocol-version")?.trim() ?? "";
  return /^\d{4}-\d{2}-\d{2}$/.test(claim) ? claim : "2025-03-26";
}
/** The `id` of an error whose request's id is unknown: `null` up to 2025-06-18, none after. */
export const unknownIdOf = (revision: string) => (revision >= "2025-11-25" ? {} : { id: null });

/** How deep a JSON text nests, its strings skipped. */
function nesting(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === "\\") i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === "[" || char === "{") deepest = Math.max(deepest, ++depth);
    else if (char === "]" || char === "}") depth--;
  }
  return deepest;
}

/** A key as docs/errors.md says lenient readers read it: any case (`ſ` as `s`), ended at a NUL. */
export const folded = (key: string) => key.split("\u0000", 1)[0]?.toUpperCase().toLowerCase() ?? "";
const MEMBERS = ["jsonrpc", "id", "method", "params", "result", "error"];

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isId = (id: unknown) =>
  typeof id === "string" || (typeof id === "number" && !Number.isNaN(id));

/** Whether `message` is a JSON-RPC 2.0 message as MCP sends them (a request, notification or response). */
function isMessage(message: unknown): boolean {
  if (!isObject(message) || message.jsonrpc !== "2.0") return false;
  const { params, error } = message;
  const hasId = "id" in message;
  const paramsFit = !("params" in message) || isObject(params) || Array.isArray(params);
  const call = typeof message.method === "string" && paramsFit && (!hasId || isId(message.id));
  const result = hasId && isId(message.id) && "result" in message && !("error" in message);
  const failure =
    hasId &&
    (message.id === null || isId(message.id)) &&
    isObject(error) &&
    Number.isInteger(error.code) &&
    typeof error.message === "string" &&
    !("result" in message);
  return call || result || failure;
}

/** A request: a string method and an id (a response may carry a `method` of another type). */
export const isRequest = (message: Record<string, unknown>) =>
  typeof message.method === "string" && "id" in message;

/** Whether a client that matches answers by `Number(id)` takes two requests for one (docs/errors.md). */
const sameRequest = (a: unknown, b: unknown) =>
  Object.is(a, b) || a === b || Number(a) === Number(b);

type BodyVerdict =
  | { refused: true; status: number; code: number | number[] }
  | { refused: false; messages: Record<string, unknown>[]; batch: boolean };

/** What docs/errors.md says of a POST body, before its headers are compared with it. */
export function verdictOn(bytes: Uint8Array, shape: unknown, limits: Limits): BodyVerdict {
  const refused = (status: number, code: number | number[]) => ({
    refused: true as const,
    status,
    code,
  });
  if (bytes.length > limits.maxBodyBytes) return refused(413, -32600);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return refused(400, -32700);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Not JSON, and nested deeper than 512 levels besides: both rows of the table fit it.
    return nesting(text) > 512 ? refused(400, [-32700, -32600]) : refused(400, -32700);
  }
  if (nesting(text) > 512) return refused(400, -32600);
  for (const keys of objectsKeys(shape)) {
    if (new Set(keys.map(folded)).size < keys.length) return refused(400, -32600);
  }
  const messages = Array.isArray(value) ? value : [value];
  if (messages.length === 0 || messages.length > limits.maxBatch) return refused(400, -32600);
  for (const message of messages) {
    if (!isMessage(message)) return refused(400, -32600);
    const keys = Object.keys(message);
    if (keys.some((key) => !MEMBERS.includes(key) && MEMBERS.includes(folded(key)))) {
      return refused(400, -32600);
    }
    const method = (message as { method?: unknown }).method;
    if (!("id" in message) && (method === "tools/call" || method === "tools/list")) {
      return refused(400, -32600);
    }
  }
  const requests = messages.filter(isRequest);
  for (const [i, a] of requests.entries()) {
    if (requests.slice(0, i).some((b) => sameRequest(a.id, b.id))) return refused(400, -32600);
  }
  return { refused: false, messages, batch: Array.isArray(value) };
}

/** `MAX_BODY_BYTES` and `MAX_BATCH_MESSAGES` as the proxy under test has them. */
export interface Limits {
  maxBodyBytes: number;
  maxBatch: number;
}

/** Where a request's `Mcp-Name` comes from in its params (SEP-2243, SEP-2663), as docs/errors.md lists them. */
export const NAMED_BY: Readonly<Record<string, string>> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri",
  "resources/subscribe": "uri",
  "resources/unsubscribe": "uri",
  "tasks/get": "taskId",
  "tasks/update": "taskId",
  "tasks/cancel": "taskId",
};

/** A header value as the SDK's server reads it (docs/errors.md): `undefined` where it refuses it. */
function headerRead(value: string): string | undefined {
  const form = /^=\?base64\?(.*)\?=$/.exec(value);
  if (!form) return value;
  const encoded = form[1] ?? "";
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(encoded)) {
    return undefined;
  }
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(
      Uint8Array.from(atob(encoded), (char) => char.charCodeAt(0)),
    );
  } catch {
    return undefined;
  }
}

/** Which 2026-07-28 header docs/errors.md says disagrees with the body before the origin is asked; `undefined`: none. */
export function headerMismatch(
  headers: Headers,
  verdict: { messages: Record<string, unknown>[]; batch: boolean },
) {
  const names = [...headers.keys()];
  // The revision a message claims in `_meta` (2026-07-28's envelope), as written, against the
  // header's; a batch without one is 2025-03-26's.
  const version = headers.get("mcp-protocol-version") ?? (verdict.batch ? "2025-03-26" : null);
  const claimed = verdict.messages.some((message) => {
    const meta = isObject(message.params) ? message.params._meta : undefined;
    const claim = isObject(meta) ? meta["io.modelcontextprotocol/protocolVersion"] : undefined;
    return typeof claim === "string" && version !== null && version !== claim;
  });
  if (claimed) return "mcp-protocol-version";
  if (verdict.batch) {
    return names.find((n) => n === "mcp-method" || n === "mcp-name" || n.startsWith("mcp-param-"));
  }
  const [first = {}] = verdict.messages;
  const method = first.method;
  if (typeof method !== "string") return undefined;
  const sent = headers.get("mcp-method");
  // Mcp-Name and Mcp-Param-* come with Mcp-Method, in every revision that has them.
  if (sent === null) {
    const mirrored = names.find((n) => n === "mcp-name" || n.startsWith("mcp-param-"));
    if (mirrored !== undefined) return mirrored;
  }
  if (sent !== null && sent !== method) return "mcp-method";
  const name = headers.get("mcp-name");
  const member = Object.hasOwn(NAMED_BY, method) ? NAMED_BY[method] : undefined;
  if (name === null || member === undefined || !isObject(first.params)) return undefined;
  if (!Object.hasOwn(first.params, member)) return undefined;
  return headerRead(name) === first.params[member] ? undefined : "mcp-name";
}

/** The members of params docs/errors.md says the proxy reads, by method, beside every message's `_meta`. */
const READ_PARAMS: Readonly<Record<string, string>> = {
  "tools/list": "cursor",
  initialize: "clientInfo",
  ...Object.fromEntries(Object.entries(NAMED_BY).filter(([method]) => method !== "tools/call")),
};
const READ_META = [
  "io.modelcontextprotocol/protocolVersion",
  "io.modelcontextprotocol/clientCapabilities",
  "io.modelcontextprotocol/clientInfo",
];
const misspells = (keys: string[], members: string[]) =>
  keys.some((key) => !members.includes(key) && members.map(folded).includes(folded(key)));

/** A call's own members, docs/arguments.md's envelope. */
const CALL_MEMBERS = [
  "name",
  "arguments",
  "args",
  "_meta",
  "task",
  "inputResponses",
  "requestState",
];

/**
 * Whether a call's params write, as docs/errors.md says, `name` so where none
 * is written as it, or beside arguments that hold the arguments (a non-empty
 * object, or JSON text of one) a member of its own so.
 */
function callMisspelled(params: Record<string, unknown>): boolean {
  const keys = Object.keys(params);
  if (!Object.hasOwn(params, "name") && misspells(keys, ["name"])) return true;
  let args = params.arguments;
  if (typeof args === "string") {
    try {
      args = JSON.parse(args);
    } catch {}
  }
  return isObject(args) && Object.keys(args).length > 0 && misspells(keys, CALL_MEMBERS);
}

/**
 * Whether docs/errors.md says a message of the body is refused `-32602` for
 * params that write a member the proxy reads (or a key of its `_meta`) in a
 * spelling lenient readers take for it; a `tools/call`'s own members as the
 * call reads them (`callMisspelled`).
 */
export function paramsMisspelled(verdict: { messages: Record<string, unknown>[] }): boolean {
  return verdict.messages.some(({ method, params }) => {
    if (typeof method !== "string" || !isObject(params)) return false;
    const read = ["_meta", ...(Object.hasOwn(READ_PARAMS, method) ? [READ_PARAMS[method]] : [])];
    if (
      method === "tools/call"
        ? callMisspelled(params)
        : misspells(Object.keys(params), read as string[])
    )
      return true;
    const meta = params._meta;
    return isObject(meta) && misspells(Object.keys(meta), READ_META);
  });
}

/**
 * Which `Mcp-Param-*` header of a lone `tools/call` docs/errors.md says
 * disagrees with the arguments it forwards, for a parameter the tool's schema
 * declares one for (`declared`: tool name, parameter, header), from a client
 * that sent `Mcp-Method`; `undefined`: none, `"either"` where it cannot be
 * told here. Only plain argument objects, whose values the proxy forwards as
 * they came where their type is declared, are judged.
 */
export function paramMismatch(
  headers: Headers,
  call: Record<string, unknown>,
  declared: Record<string, Record<string, string>>,
): string | undefined {
  const params = isObject(call.params) ? call.params : {};
  const { name, arguments: args } = params;
  if (!headers.has("mcp-method") || call.method !== "tools/call" || typeof name !== "string") {
    return undefined;
  }
  if (!Object.hasOwn(declared, name) || !isObject(args)) return undefined;
  for (const [parameter, header] of Object.entries(declared[name] ?? {})) {
    const sent = headers.get(`mcp-param-${header.toLowerCase()}`);
    const value = args[parameter];
    if (sent === null) continue;
    // A lone surrogate goes in a header as U+FFFD, which a reader may take for it or not.
    if (typeof value === "string" && !value.isWellFormed()) return "either";
    if (headerRead(sent) !== value) return `mcp-param-${header.toLowerCase()}`;
  }
  return undefined;
}

/** The JSON-RPC messages a client reads in an answer, a JSON body or an event stream; what it cannot read, left out. */
export function readMessages(text: string, headers: Headers): unknown[] {
  const parse = (data: string) => {
    try {
      return [JSON.parse(data)].flat();
    } catch {
      return [];
    }
  };
  if (!(headers.get("content-type") ?? "").toLowerCase().includes("text/event-stream")) {
    return parse(text);
  }
  return text
    .replace(/^\ufeff/, "")
    .split(/\r\n\r\n|\n\n|\r\r|\r\n\r|\n\r\n|\r\n\n/)
    .flatMap((event) => {
      const data = event
        .split(/\r\n|\r|\n/)
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5));
      return data.length > 0 ? parse(data.join("\n")) : [];
    });
}
