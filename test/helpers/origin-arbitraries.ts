/**
 * Answers of an untrusted origin, for the gateway's scripted origin
 * (test/fixtures/node/scripted-origin.ts) in test/worker/fuzz.test.ts: any
 * status and reason, header lines as written, encodings labeled and not,
 * framings, writes cut anywhere, and bodies of JSON or event streams whole
 * or broken, with listings whose tools and schemas are odd.
 */
import fc from "fast-check";
import { Lexeme, Members, written } from "./json-writer";
import type { ScriptedAnswer } from "./scripted-origin";

/** Text in an answer the scripted origin replaces by the id of the request it answers. */
export const ID_MARK = '"@ID@"';

/** Tool names as origins write them, and as they should not. */
const originToolName = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom("files.read", "secret.admin", "a/b", "get-weather", "über"),
  },
  fc.constantFrom(
    "",
    " ",
    "x".repeat(10_000),
    "\u0000\u0007",
    "\ud800",
    "__proto__",
    "a\nb",
    "名前",
  ),
  fc.string({ maxLength: 20 }),
  fc.constantFrom(null, 1, true, [], {}),
);
/** Numbers past what a double holds, and others JSON.stringify writes otherwise. */
const ODD_NUMBERS = [
  "1e400",
  "-1e400",
  "12345678901234567891",
  "-0",
  "1.0",
  "0.10",
  "1E-7",
  "9007199254740993",
];
const anOddNumber = fc.constantFrom(...ODD_NUMBERS).map((text) => new Lexeme(text, Number(text)));
const anInputSchema = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record(
      {
        type: fc.oneof(
          { weight: 4, arbitrary: fc.constant("object") },
          fc.jsonValue({ maxDepth: 0 }),
        ),
        properties: fc.dictionary(
          fc.constantFrom("path", "count", "n", "__proto__", "a b"),
          fc.record(
            {
              type: fc.constantFrom("string", "integer", "number", "object", "array"),
              minimum: anOddNumber,
              maximum: anOddNumber,
              default: fc.oneof(anOddNumber, fc.jsonValue({ maxDepth: 1 })),
              enum: fc.array(fc.oneof(anOddNumber, fc.string({ maxLength: 3 })), { maxLength: 3 }),
              "x-mcp-header": fc.constantFrom("N", "bad header", ""),
            },
            { requiredKeys: [] },
          ),
          { maxKeys: 3 },
        ),
        required: fc.oneof(fc.constantFrom(["path"], ["missing"]), fc.jsonValue({ maxDepth: 1 })),
      },
      { requiredKeys: [] },
    ),
  },
  fc.constantFrom(true, false, null, [], "object", 1, new Lexeme("1e400", Infinity)),
);
const anOriginTool = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record(
      {
        name: originToolName,
        description: fc.oneof(fc.string({ maxLength: 20 }), fc.constant(null)),
        inputSchema: anInputSchema,
        annotations: fc.record({ destructiveHint: fc.boolean() }, { requiredKeys: [] }),
      },
      { requiredKeys: [] },
    ),
  },
  fc.jsonValue({ maxDepth: 1 }),
);
/** A listing's result: mostly tools, now and then something else. */
const aListingResult = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record(
      {
        tools: fc.oneof(
          { weight: 6, arbitrary: fc.array(anOriginTool, { maxLength: 5 }) },
          fc.constantFrom(null, {}, "tools", 1),
        ),
        nextCursor: fc.oneof(fc.constantFrom("next", ""), fc.jsonValue({ maxDepth: 0 })),
      },
      { requiredKeys: ["tools"] },
    ),
  },
  fc.jsonValue({ maxDepth: 1 }),
);
/** One JSON-RPC answer as an origin writes it: to the request's id, or to another. */
const anOriginMessage = fc
  .record({
    id: fc.oneof(
      { weight: 8, arbitrary: fc.constant(new Lexeme(ID_MARK, undefined)) },
      fc.constantFrom(99, "1", null, new Lexeme("1e400", Infinity)),
    ),
    result: aListingResult,
    error: fc.option(
      fc.record({ code: fc.integer({ min: -32700, max: -32000 }), message: fc.string() }),
      {
        freq: 6,
      },
    ),
  })
  .map(
    ({ id, result, error }) =>
      new Members([
        ["jsonrpc", "2.0"],
        ["id", id],
        error === null ? ["result", result] : ["error", error],
      ]),
  );

/** A JSON text as an origin may send it, whole or broken. */
const aJsonBody = fc
  .record({
    messages: fc.oneof(
      { weight: 5, arbitrary: anOriginMessage.map((m) => written(m)) },
      fc.array(anOriginMessage, { minLength: 1, maxLength: 3 }).map((ms) => written(ms)),
    ),
    broken: fc.constantFrom(
      "none",
      "none",
      "none",
      "truncated",
      "garbage",
      "bom",
      "notUtf8",
      "empty",
      "deep",
    ),
  })
  .map(({ messages, broken }): Uint8Array | string => {
    switch (broken) {
      case "truncated":
        return messages.slice(0, Math.floor(messages.length / 2));
      case "garbage":
        return `${messages}}`;
      case "bom":
        return `\ufeff${messages}`;
      case "notUtf8":
        return new Uint8Array([...new TextEncoder().encode(messages), 0xff, 0xfe]);
      case "empty":
        return "";
      case "deep":
        return messages.replace('"result":', `"result":${"[".repeat(600)}1${"]".repeat(600)},"x":`);
      default:
        return messages;
    }
  });

/** An event stream carrying `json` as its data, framed as the SSE format allows, and as it does not. */
const anEventStream = fc
  .record({
    json: aJsonBody.map((b) => (typeof b === "string" ? b : new TextDecoder().decode(b))),
    lineEnd: fc.constantFrom("\n", "\n", "\r\n", "\r"),
    lastBlank: fc.boolean(),
    split: fc.option(fc.nat({ max: 2000 })),
    id: fc.option(
      fc.oneof(fc.constantFrom("1", "x".repeat(100_000), "a\u0000b"), fc.string({ maxLength: 8 })),
    ),
    retry: fc.option(fc.constantFrom("1000", "-1", "garbage", "1e400", "")),
    bom: fc.boolean(),
    prelude: fc.constantFrom("", ": comment", "event: ping\ndata: {}", "data:", "Data: {}", ":\n"),
    noSpace: fc.boolean(),
  })
  .map(({ json, lineEnd: end, lastBlank, split, id, retry, bom, prelude, noSpace }) => {
    const data = noSpace ? "data:" : "data: ";
    const dataLines =
      split === null
        ? [`${data}${json}`]
        : [`${data}${json.slice(0, split)}`, `${data}${json.slice(split)}`];
    const lines = [
      ...(prelude === "" ? [] : [prelude, ""]),
      ...(id === null ? [] : [`id: ${id}`]),
      ...(retry === null ? [] : [`retry: ${retry}`]),
      "event: message",
      ...dataLines,
    ];
    return `${bom ? "\ufeff" : ""}${lines.join(end)}${end}${lastBlank ? end : ""}`;
  });

const STATUSES = [
  200, 200, 200, 200, 201, 202, 204, 205, 206, 299, 304, 400, 401, 404, 429, 500, 503, 599,
];
const CONTENT_TYPE_VALUES = [
  "application/json",
  "APPLICATION/JSON; charset=UTF-8",
  "application/json; charset=latin1",
  "application/json; charsets",
  "text/event-stream",
  "TEXT/EVENT-STREAM; charset=utf-8",
  "text/plain",
  "application/octet-stream",
];

/** An origin's answer: any status, header lines, encoding, framing and body. */
export const anOriginAnswer: fc.Arbitrary<ScriptedAnswer & { broken: boolean }> = fc
  .record({
    informational: fc.option(
      fc.constantFrom(
        ["HTTP/1.1 100 Continue"],
        ["HTTP/1.1 103 Early Hints\r\nLink: </x>; rel=preload"],
      ),
      { freq: 8 },
    ),
    status: fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...STATUSES) },
      fc.integer({ min: 200, max: 599 }),
    ),
    // Reason phrases as RFC 9112 §4 has them (a tab among them), or none.
    reason: fc.constantFrom(
      "OK",
      "All\tgood",
      "OK",
      "All\tgood",
      "",
      "ÿ obs-text",
      "x".repeat(1000),
    ),
    stream: fc.boolean(),
    json: aJsonBody,
    events: anEventStream,
    contentType: fc.option(fc.constantFrom(...CONTENT_TYPE_VALUES), { freq: 8 }),
    typeTwice: fc.option(fc.constantFrom(...CONTENT_TYPE_VALUES), { freq: 10 }),
    encoding: fc.constantFrom(
      "none",
      "none",
      "none",
      "gzip",
      "gzip-unlabeled",
      "gzip-mislabeled",
      "x-gzip",
      "br-mislabeled",
      "identity",
    ),
    framing: fc.constantFrom("length", "length", "chunked", "close"),
    // HTTP/1.0: no Connection header, which the proxy would leave out, making the answer anew.
    http10: fc.boolean(),
    cuts: fc.array(fc.nat({ max: 300 }), { maxLength: 4 }),
    extra: fc.subarray(
      [
        ["Set-Cookie", "a=1; Domain=proxy.test; Path=/"],
        [
          "WWW-Authenticate",
          'Bearer resource_metadata="https://origin.test/.well-known/oauth-protected-resource"',
        ],
        ["Location", "https://elsewhere.test/mcp?key=secret"],
        ["Alt-Svc", 'h2=":443"'],
        ["Connection", "x-hop, not a name"],
        ["X-Hop", "1"],
        ["Content-Length", "5"],
        ["Mcp-Session-Id", "s-1"],
        ["ETag", '"abc"'],
      ] as [string, string][],
      { maxLength: 2 },
    ),
  })
  .map((a) => {
    const body = a.stream ? a.events : a.json;
    const type = a.contentType ?? (a.stream ? "text/event-stream" : "application/json");
    const headers: [string, string][] = [["Content-Type", type]];
    if (a.typeTwice !== null) headers.push(["Content-Type", a.typeTwice]);
    const label: Record<string, string> = {
      gzip: "gzip",
      "gzip-mislabeled": "gzip",
      "x-gzip": "x-gzip",
      "br-mislabeled": "br",
      identity: "identity",
    };
    if (label[a.encoding] !== undefined)
      headers.push(["Content-Encoding", label[a.encoding] as string]);
    // A Content-Length that is not the body's, under a framing that has one: a broken answer.
    const wrongLength = a.extra.some(([name]) => name === "Content-Length");
    const extra =
      a.framing === "length" ? a.extra : a.extra.filter(([name]) => name !== "Content-Length");
    const broken =
      a.encoding === "gzip-mislabeled" ||
      a.encoding === "br-mislabeled" ||
      (a.framing === "length" && wrongLength);
    return {
      ...(a.informational === null ? {} : { informational: a.informational }),
      status: a.status,
      reason: a.reason,
      headers: [...headers, ...extra],
      body,
      gzip: a.encoding === "gzip" || a.encoding === "gzip-unlabeled" || a.encoding === "x-gzip",
      framing: a.framing as ScriptedAnswer["framing"],
      cuts: a.cuts,
      http10: a.http10 && a.framing !== "chunked",
      broken,
    };
  });
