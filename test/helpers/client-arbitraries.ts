/**
 * Requests to the MCP endpoint as an untrusted client may write them, for
 * test/worker/fuzz.test.ts: paths, methods, media types, revisions, the
 * 2026-07-28 headers, and JSON-RPC bodies of every shape and odd lexeme,
 * each odd in a way docs/errors.md says something of, often.
 */
import fc from "fast-check";
import { isObject, NAMED_BY } from "./documented-answers";
import { Lexeme, Members } from "./json-writer";

/** Paths as written, each with where docs/errors.md says it leads (none of them a URL parser rewrites). */
export const PATHS: ReadonlyArray<readonly [string, "endpoint" | "refused" | "missing"]> = [
  ["/mcp", "endpoint"],
  ["/mcp/openai-strict", "endpoint"],
  ["/mcp/gemini", "endpoint"],
  ["/mcp/anthropic", "endpoint"],
  ["/mcp/portable", "endpoint"],
  ["/mcp/mcp", "endpoint"],
  ["/%6dcp", "endpoint"],
  ["/m%63p/bedrock", "endpoint"],
  ["/mcp/%67emini", "endpoint"],
  ["/%6D%63%70", "endpoint"],
  ["/mcp/", "missing"],
  ["/mcp/Gemini", "missing"],
  ["/mcp/gemini/", "missing"],
  ["/mcp/gemini/x", "missing"],
  ["/mcp;x", "missing"],
  ["/mcp/gemini;v=1", "missing"],
  ["/mcp%20", "missing"],
  ["/mcp/%E9", "missing"],
  ["/MCP", "missing"],
  ["/mcp.json", "missing"],
  ["/x/mcp", "missing"],
  ["/", "missing"],
  ["//mcp", "refused"],
  ["/mcp//gemini", "refused"],
  ["/mcp/..;x/gemini", "refused"],
  ["/mcp/.;/gemini", "refused"],
  ["/mcp/%2E%2E;x", "refused"],
  ["/mcp/%2e%2E%3Bx/gemini", "refused"],
  ["/mcp%2fgemini", "refused"],
  ["/mcp%2F", "refused"],
  ["/mcp/%5Cgemini", "refused"],
  ["/mcp/%25", "refused"],
  ["/mcp/%256dcp", "refused"],
  ["/mcp/%zz", "refused"],
  ["/mcp/%", "refused"],
  ["/mcp/%6", "refused"],
];
export const METHODS = ["POST", "POST", "POST", "GET", "DELETE", "OPTIONS", "PUT", "PATCH", "HEAD"];
/** `Content-Type` values, each with whether a POST labeled so is refused (415). */
export const CONTENT_TYPES: ReadonlyArray<readonly [string | undefined, boolean]> = [
  ["application/json", false],
  ["Application/JSON", false],
  [" application/json ", false],
  ["application/json;", false],
  ["application/json; charset=utf-8", false],
  ["application/json;charset=UTF-8", false],
  ['application/json; charset="utf-8"', false],
  ["application/json; charset=utf8", false],
  ["application/json; foo=bar; charset=unicode-1-1-utf-8", false],
  ["application/json; profile=x", false],
  ["application/json; charsets", false],
  ["application/json; charset", false],
  ["application/json; charset=x-unicode20utf8", false],
  ["application/json; charset=latin1", true],
  ["application/json; charset=utf-16", true],
  ['application/json; charset="iso-8859-1"', true],
  ["application/json; charset=utf-8; charset=shift_jis", true],
  ["application/json, application/json", true],
  ["application/jsonx", true],
  ["application/json-rpc", true],
  ["text/json", true],
  ["text/plain", true],
  ["application/x-www-form-urlencoded", true],
  ["multipart/form-data; boundary=x", true],
  ["", true],
  [undefined, true],
];
/** `Content-Encoding` values, each with whether a POST labeled so is refused (415). */
export const CONTENT_ENCODINGS: ReadonlyArray<readonly [string | undefined, boolean]> = [
  [undefined, false],
  [undefined, false],
  ["identity", false],
  ["IDENTITY", false],
  ["identity, identity", false],
  ["gzip", true],
  ["br", true],
  ["identity, gzip", true],
  ["x-custom", true],
];
const REVISIONS = ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"];
export const revisionHeader = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...REVISIONS) },
  fc.constantFrom(" 2025-11-25 ", "2099-01-01", "2025-11-25, 2026-07-28", "garbage", "", "1"),
  fc.constant(undefined),
);
export const sessionId = fc.option(
  fc.oneof(
    fc.uuid(),
    fc.string({ unit: fc.constantFrom(..."abcXYZ019-._~!$&'()*+,;=:@/?% \t"), maxLength: 300 }),
  ),
);
export const accept = fc.option(
  fc.constantFrom(
    "application/json, text/event-stream",
    "text/event-stream, application/json;q=0.5",
    "*/*",
    "application/json",
    "TEXT/EVENT-STREAM",
    "application/json, application/json",
  ),
);
/** Query strings, each with whether it names a parameter `ORIGIN_URL` sets (`script`), as an origin may read it. */
export const QUERIES: ReadonlyArray<readonly [string, boolean]> = [
  ["", false],
  ["", false],
  ["?trace=1", false],
  ["?a=1;script=2", false],
  ["?scripts=1", false],
  ["?script=other", true],
  ["?Script=other", true],
  ["?SCRIPT[]=x", true],
  ["?script[0]=x", true],
  ["?x=1&script", true],
  ["?%73cript=1", true],
  ["?scr%69pt=1", true],
  ["?script%5B%5D=1", true],
  ["?a=%E9", false],
  ["?%zz=1", false],
];
export const SIMPLE_BODIES = [
  '{"jsonrpc":"2.0","id":1,"method":"ping"}',
  '{"jsonrpc":"2.0","id":"a","method":"tools/list"}',
  '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"files_read","arguments":{"path":"x"}}}',
];

/** Ids as clients write them, and as JSON reads them. */
const ID_LEXEMES: ReadonlyArray<readonly [string, unknown]> = [
  ["1e400", Number.POSITIVE_INFINITY],
  ["-1e400", Number.NEGATIVE_INFINITY],
  ["18446744073709551616", 2 ** 64],
  ["12345678901234567891", Number("12345678901234567891")],
  ["-0", -0],
  ["1.0", 1],
  ["1E2", 100],
  ["0.1", 0.1],
  ['"1"', "1"],
  ['"0x1"', "0x1"],
  ['""', ""],
  ['"\\ud800"', "\ud800"],
  ['"\\u0041"', "A"],
  ['"\\u0000"', "\u0000"],
];
/** An id: one of the lexemes above, or a plain one; rarely of a type no id may be. */
const anId = fc.oneof(
  { weight: 6, arbitrary: fc.nat({ max: 40 }).map((n) => new Lexeme(String(n), n)) },
  { weight: 4, arbitrary: fc.constantFrom(...ID_LEXEMES).map(([t, v]) => new Lexeme(t, v)) },
  { weight: 2, arbitrary: fc.string({ maxLength: 6 }) },
  fc.constantFrom(null, true, {}, [], 1.5),
);
const NAMES = [
  "files_read",
  "weather",
  "a_b",
  "files.read",
  "a/b",
  "secret.admin",
  "secret_admin",
  "search_tools",
  "call_tool",
  "",
  " ",
  "a b",
  "x".repeat(300),
  "\u0000",
  "\u0007\u001b[31mred",
  "line\nbreak",
  "\u202eevil",
  "\ud800",
  "名前",
  "__proto__",
  "constructor",
  "toString",
];
const aName = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...NAMES) },
  fc.string({ maxLength: 40 }),
  fc.constantFrom(1, null, {}, [], true),
);
const aLeaf = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(...ID_LEXEMES).map(([t, v]) => new Lexeme(t, v)),
  fc.constantFrom("3", "true", "null", "{", '{"a":1}', "[1,2]", "1e400"),
);
/** Arguments of every JSON type, objects of them as models write them. */
const someArguments = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.dictionary(
      fc.oneof(
        fc.constantFrom("path", "count", "region", "days", "Path", "payload-json", "__proto__"),
        fc.string({ maxLength: 6 }),
      ),
      aLeaf,
      { maxKeys: 4 },
    ),
  },
  fc.constantFrom('{"path":"x","count":"2"}', "{", "[]", "", "null"),
  fc.jsonValue({ maxDepth: 2 }),
);
/** A call's params to the tool that declares `Mcp-Param-Region` (and `-Days`), for the headers beside it. */
const weatherParams = fc.record({
  name: fc.constant("weather"),
  arguments: fc.record(
    {
      region: fc.oneof(fc.constantFrom("eu", " eu", "é", "\ud800", "=?base64?ZXU=?="), fc.string()),
      days: aLeaf,
    },
    { requiredKeys: ["region"] },
  ),
});
const callParams = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record(
      {
        name: aName,
        arguments: someArguments,
        args: someArguments,
        path: aLeaf,
        _meta: fc.oneof(
          fc.constant({ "io.modelcontextprotocol/protocolVersion": "2026-07-28" }),
          fc.jsonValue({ maxDepth: 2 }),
        ),
      },
      { requiredKeys: ["name"] },
    ),
  },
  { weight: 2, arbitrary: weatherParams },
  fc.constantFrom("params", 1, null, [], [1, 2], {}),
);
const CURSORS = ["", "x", "c".repeat(5000), "\ud800", "\u0000", "%00", "../../", "=?base64?eA==?="];
const listParams = fc.oneof(
  fc.record(
    {
      cursor: fc.oneof(fc.constantFrom(...CURSORS), fc.string(), fc.jsonValue({ maxDepth: 1 })),
      _meta: fc.jsonValue({ maxDepth: 1 }),
    },
    { requiredKeys: [] },
  ),
  fc.constantFrom("params", null, [], 1),
);
const METHOD_NAMES = [
  "ping",
  "tools/list",
  "tools/call",
  "resources/read",
  "prompts/get",
  "tasks/get",
  "notifications/initialized",
  "x/unknown",
  "",
];
/** A JSON-RPC message of any kind, and now and then one that is none. */
export const aMessage: fc.Arbitrary<Members> = fc
  .record({
    kind: fc.constantFrom("request", "request", "request", "notification", "result", "error"),
    jsonrpc: fc.oneof(
      { weight: 12, arbitrary: fc.constant("2.0") },
      fc.constantFrom("2", "1.0", "2.0 ", 2, null),
    ),
    id: anId,
    method: fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...METHOD_NAMES) }, aName),
    callParams,
    listParams,
    otherParams: fc.option(fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom(null, "p"))),
    result: fc.jsonValue({ maxDepth: 2 }),
    error: fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record({
          code: fc.oneof(
            fc.integer({ min: -32800, max: -32000 }),
            fc.constantFrom(new Lexeme("1.0", 1), new Lexeme("1e400", Infinity), 1.5, "1"),
          ),
          message: fc.oneof(fc.string({ maxLength: 8 }), fc.constant(null)),
        }),
      },
      fc.jsonValue({ maxDepth: 1 }),
    ),
    // Rarely: a response with both `result` and `error`, which is none.
    both: fc.oneof({ weight: 8, arbitrary: fc.constant(false) }, fc.constant(true)),
  })
  .map((m) => {
    const members: [string, unknown][] = [["jsonrpc", m.jsonrpc]];
    if (m.kind === "request" || m.kind === "result" || m.kind === "error")
      members.push(["id", m.id]);
    if (m.kind === "request" || m.kind === "notification") {
      members.push(["method", m.method]);
      const params =
        m.method === "tools/call"
          ? m.callParams
          : m.method === "tools/list"
            ? m.listParams
            : m.otherParams;
      if (params !== null) members.push(["params", params]);
    }
    if (m.kind === "result" || (m.kind === "error" && m.both)) members.push(["result", m.result]);
    if (m.kind === "error" || (m.kind === "result" && m.both)) members.push(["error", m.error]);
    return new Members(members);
  });

/** A lone call to the tool that declares `Mcp-Param-*` headers, which the body property sends them beside. */
export const aHeaderedCall: fc.Arbitrary<Members> = fc
  .record({ id: anId, params: weatherParams })
  .map(
    ({ id, params }) =>
      new Members([
        ["jsonrpc", "2.0"],
        ["id", id],
        ["method", "tools/call"],
        ["params", params],
      ]),
  );

/** A key that folds to another's (docs/errors.md: case, `ſ`, what follows a NUL), or spells it with escapes. */
const KEY_TWINS: ReadonlyArray<readonly [string, string | Lexeme]> = [
  ["id", "ID"],
  ["id", new Lexeme('"\\u0069d"', "id")],
  ["method", "Method"],
  ["method", new Lexeme('"method\\u0000"', "method\u0000")],
  ["params", "paramſ"],
  ["params", "PARAMS"],
  ["jsonrpc", "jsonrpc"],
  ["jsonrpc", "JSONRPC"],
];
/** What a body may be made wrong with; each changes what docs/errors.md says of it in one known way. */
export const DEFECTS = [
  "none",
  "none",
  "none",
  "none",
  "none",
  "keyTwice",
  "keyTwiceDeep",
  "misspelled",
  "misspelledParam",
  "deep",
  "deepInvalid",
  "notUtf8",
  "bom",
  "syntax",
  "oversized",
] as const;
type Defect = (typeof DEFECTS)[number];

/** A body's JSON value as written, with `defect` made in it. */
export function withDefect(value: Members | Members[], defect: Defect, levels: number): unknown {
  const first = Array.isArray(value) ? value[0] : value;
  if (!first) return value;
  const add = (member: readonly [string | Lexeme, unknown]) => {
    const changed = new Members([...first.members, member]);
    return Array.isArray(value) ? [changed, ...value.slice(1)] : changed;
  };
  switch (defect) {
    case "keyTwice": {
      const [key, twin] = KEY_TWINS[levels % KEY_TWINS.length] as (typeof KEY_TWINS)[number];
      return first.members.some(([k]) => k === key) ? add([twin, 1]) : add([key, 1]);
    }
    case "keyTwiceDeep":
      return add([
        "x",
        new Members([
          ["name", 1],
          ["Name", 2],
        ]),
      ]);
    case "misspelled":
      return add([["Params", "RESULT", "Error", "iD"][levels % 4] as string, {}]);
    case "misspelledParam": {
      // `_meta`, or the revision claim in it, as Go's encoding/json reads it, in params the first
      // message writes as an object; of a call, the claim, or a member of its own (an argument
      // beside arguments written inline, docs/arguments.md).
      const at = first.members.findIndex(([key]) => key === "params");
      const params = first.members[at]?.[1];
      if (!isObject(params)) return value;
      const call = first.members.some(([key, v]) => key === "method" && v === "tools/call");
      const meta = { "IO.modelcontextprotocol/protocolVersion": "2026-07-28" };
      const key = ["_Meta", "_META", "_meta\u0000"][levels % 3] as string;
      const callKey = ["_Meta", "TASK", "requestſtate"][levels % 3] as string;
      const misspelled = !call
        ? { ...params, [key]: {} }
        : levels % 2 === 0
          ? { ...params, _meta: meta }
          : { ...params, [callKey]: {} };
      const changed = new Members(
        first.members.map((member, index) => (index === at ? ["params", misspelled] : member)),
      );
      return Array.isArray(value) ? [changed, ...value.slice(1)] : changed;
    }
    case "deep":
      return add(["x", new Lexeme(`${"[".repeat(levels)}1${"]".repeat(levels)}`, undefined)]);
    case "deepInvalid":
      return add(["x", new Lexeme(`${"[".repeat(levels)}1`, undefined)]);
    default:
      return value;
  }
}

/** The body's bytes for `text` with `defect` made in its bytes. */
export function bytesOf(
  text: string,
  defect: Defect,
  at: number,
  maxBodyBytes: number,
): Uint8Array {
  const bytes = new TextEncoder().encode(text);
  const cut = at % (bytes.length + 1);
  const splice = (inserted: number[]) =>
    new Uint8Array([...bytes.slice(0, cut), ...inserted, ...bytes.slice(cut)]);
  switch (defect) {
    case "notUtf8":
      return splice(
        [[0xff], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xe2, 0x82], [0xf4, 0x90, 0x80, 0x80]][
          at % 5
        ] ?? [],
      );
    case "bom":
      return new Uint8Array([0xef, 0xbb, 0xbf, ...bytes]);
    case "syntax":
      return new TextEncoder().encode(
        [text.slice(0, -1), `${text},`, `${text}x`, text.replaceAll('"', "'"), `${text}\u0000`][
          at % 5
        ],
      );
    case "oversized":
      return new TextEncoder().encode(`${" ".repeat(maxBodyBytes)}${text}`);
    default:
      return bytes;
  }
}

/** A value as a 2026-07-28 client writes it in a header: plain where it can be, else `=?base64?…?=`. */
function headerValue(value: string, form: "plain" | "base64" | "unpadded"): string {
  const plain = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(value) && !value.startsWith("=?");
  if (plain && form === "plain") return value;
  let binary = "";
  for (const byte of new TextEncoder().encode(value)) binary += String.fromCharCode(byte);
  const encoded = btoa(binary);
  return `=?base64?${form === "unpadded" ? encoded.replace(/=+$/, "") : encoded}?=`;
}

export const aHeaderForm = fc.constantFrom(
  "plain",
  "plain",
  "base64",
  "unpadded",
  "other",
  "none",
) as fc.Arbitrary<"plain" | "base64" | "unpadded" | "other" | "none">;

/** The 2026-07-28 headers a client may send beside a body whose first message is `first`. */
export function mcpHeaders(
  first: Record<string, unknown>,
  forms: { method: "match" | "other" | "none"; name: string; region: string },
): Headers {
  const headers = new Headers();
  const method = typeof first.method === "string" ? first.method : "x";
  if (forms.method === "match" && /^[\x21-\x7e]+$/.test(method)) headers.set("mcp-method", method);
  if (forms.method === "other")
    headers.set("mcp-method", method === "ping" ? "tools/list" : "ping");
  const params = isObject(first.params) ? first.params : {};
  const member = Object.hasOwn(NAMED_BY, method) ? NAMED_BY[method] : undefined;
  const named = member === undefined ? undefined : params[member];
  const write = (value: unknown, form: string) =>
    form === "other"
      ? "something-else"
      : typeof value === "string" && form !== "none"
        ? headerValue(value, form as "plain" | "base64" | "unpadded")
        : undefined;
  const name = write(named, forms.name);
  if (name !== undefined) headers.set("mcp-name", name);
  const args = params.arguments;
  const region = isObject(args) ? args.region : undefined;
  const param =
    method === "tools/call" && typeof region === "string" ? write(region, forms.region) : undefined;
  if (param !== undefined) headers.set("mcp-param-region", param);
  return headers;
}

/** A `tools/call` or `tools/list` request, valid in its shape, odd in what it holds. */
export const aToolRequest = fc
  .record({
    call: fc.boolean(),
    id: fc.oneof(fc.nat({ max: 1000 }), fc.string({ maxLength: 4 })),
    callParams: callParams.filter(isObject),
    listParams: listParams.filter(isObject),
  })
  .map(({ call, id, callParams: c, listParams: l }) => ({
    jsonrpc: "2.0",
    id,
    method: call ? "tools/call" : "tools/list",
    params: call ? c : l,
  }));
