/**
 * What the proxy does not mean to change reaches the origin as the client
 * wrote it, in a call it does change (docs/arguments.md: lossless), and
 * what JSON-RPC forbids is refused. The bodies are read back from the gateway
 * in front of the demo origin, byte for byte.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { unreadAddressee } from "../../src/protocol/jsonrpc";
import { revisionOf } from "../../src/protocol/revision";
import { rewriteJsonText } from "../../src/rewrite/listing-answer";
import { localAnswer, rewriteResponse } from "../../src/rewrite/response";
import { answerSearch } from "../../src/rewrite/search-mode";
import { profileOf } from "../../src/schemas/profile";
import { ToolMapMemory, toolMapScopes } from "../../src/toolmap/isolate-memory";
import { ToolMap } from "../../src/toolmap/tool-map";
import { ReadBudget } from "../../src/transport/read-bounded";
import { WHOLE_LISTING } from "../../support/listing";
import { demoSession } from "../helpers/demo";
import { DEMO_NAMES } from "../helpers/demo-names";
import { captureLogs } from "../helpers/logs";
import { messagesOf, postJson, rpc } from "../helpers/mcp";
import { PROXY_URL, viaProxy } from "../helpers/proxy";
import { scriptedOrigin } from "../helpers/scripted-origin";

async function setUp() {
  const { proxy, session, received } = await demoSession();
  await messagesOf(await postJson(proxy, PROXY_URL, rpc("list", "tools/list"), session));

  /** Sends `body` as it is written; answers with the body of the call the origin received. */
  async function send(body: string): Promise<string | undefined> {
    await messagesOf(await postJson(proxy, PROXY_URL, body, session));
    const calls = (await received()).filter((r) => r.body.includes('"tools/call"'));
    return calls.at(-1)?.body;
  }
  return { proxy, session, send };
}

describe("numbers and strings keep the client's text in a call the proxy changes", () => {
  it("a 64-bit id sent to a renamed tool reaches the origin as sent", async () => {
    const { send } = await setUp();
    const received = await send(
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${DEMO_NAMES["files.read"]}","arguments":{"path":"p","max_bytes":9007199254740993}}}`,
    );
    expect(received).toBe(
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"files.read","arguments":{"path":"p","max_bytes":9007199254740993}}}',
    );
  });

  it("exotic numbers and escapes survive, in the arguments and around them", async () => {
    const { send } = await setUp();
    const args =
      '{"path":"caf\\u00e9\\/x","big":123456789012345678901234567890,"huge":1e400,"x":1.50,"z":-0,"tiny":0.0000001}';
    const meta = '{"trace":12345678901234567890,"label":"\\u2603"}';
    const received = await send(
      `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"${DEMO_NAMES["files.read"]}","arguments":${args},"_meta":${meta}}}`,
    );
    expect(received).toBe(
      `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"files.read","arguments":${args},"_meta":${meta}}}`,
    );
  });

  it("values keep their text in arguments the proxy rebuilt: recovered inline, keys coalesced", async () => {
    const { send } = await setUp();
    const inline = await send(
      `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"${DEMO_NAMES["files.read"]}","path":"p","max_bytes":9007199254740993}}`,
    );
    expect(JSON.parse(inline ?? "{}").params.arguments).toEqual({
      path: "p",
      max_bytes: 9007199254740992,
    });
    expect(inline).toContain('"arguments":{"path":"p","max_bytes":9007199254740993}');

    const coalesced = await send(
      `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"${DEMO_NAMES["catering.invoice"]}","arguments":{"payload-json":{"invoice_id":"INV-1","amount":1.10},"note":12345678901234567890}}}`,
    );
    expect(coalesced).toContain(
      '"arguments":{"payload_json":{"invoice_id":"INV-1","amount":1.10},"note":12345678901234567890}',
    );
  });

  it("a value keeps its text in arguments the proxy rebuilt, though the body writes the same double otherwise", async () => {
    // 9007199254740993 and 9007199254740992 are one double: by value alone, which text is which
    // is not known, and an origin that reads integers exactly (int64) read the other one.
    const { send } = await setUp();
    for (const [id, args, forwarded] of [
      [
        20,
        '{"path":"p","maxBytes":9007199254740993,"note":9007199254740992}',
        '{"path":"p","max_bytes":9007199254740993,"note":9007199254740992}',
      ],
      [
        21,
        '{"path":"p","max_bytes":"5","a":9007199254740993,"b":9007199254740992,"c":[1.0,1]}',
        '{"path":"p","max_bytes":5,"a":9007199254740993,"b":9007199254740992,"c":[1.0,1]}',
      ],
    ] as const) {
      const received = await send(
        `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${DEMO_NAMES["files.read"]}","arguments":${args},"_meta":{"n":9007199254740992}}}`,
      );
      expect(received, args).toContain(`"arguments":${forwarded}`);
    }
    // Inline, and the id beside it: each where it was written.
    const inline = await send(
      `{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"${DEMO_NAMES["files.read"]}","path":"p","max_bytes":9007199254740992,"note":1.0,"other":1}}`,
    );
    expect(inline).toBe(
      '{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"files.read","arguments":{"path":"p","max_bytes":9007199254740992,"note":1.0,"other":1}}}',
    );
  });

  it("arguments sent as JSON text lend their spelling of a number to nothing beside them", async () => {
    // The text's `5.0` and the id `5` are one double: by value, the origin got `"id":5.0`, which a
    // reader of integer ids may refuse (test/unit/lossless.test.ts has the property).
    const { send } = await setUp();
    const received = await send(
      `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"${DEMO_NAMES["files.read"]}","arguments":"{\\"path\\":\\"p\\",\\"max_bytes\\":5.0,\\"note\\":9007199254740993}","_meta":{"n":[9007199254740992,5]}}}`,
    );
    expect(received).toBe(
      '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"files.read","arguments":{"path":"p","max_bytes":5.0,"note":9007199254740993},"_meta":{"n":[9007199254740992,5]}}}',
    );
  });

  it("a number sent as text is made a number of the digits it was sent with", async () => {
    const { send } = await setUp();
    const exact = await send(
      `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"${DEMO_NAMES["files.read"]}","arguments":{"path":"p","max_bytes":"512"}}}`,
    );
    expect(exact).toContain('"arguments":{"path":"p","max_bytes":512}');
    const long = await send(
      `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"${DEMO_NAMES["catering.invoice"]}","arguments":{"payload_json":{"invoice_id":"I","amount":"1234567890.1234567"}}}}`,
    );
    expect(long).toContain('"amount":1234567890.1234567}');
    // More digits than a double keeps, and the body writes that double otherwise beside it: the
    // digits go where they were sent, not by value (a string enum's 64-bit id, docs/schemas.md).
    const id = await send(
      `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"${DEMO_NAMES["files.read"]}","arguments":{"path":"p","max_bytes":"9007199254740993"},"_meta":{"n":9007199254740992}}}`,
    );
    expect(id).toContain(
      '"arguments":{"path":"p","max_bytes":9007199254740993},"_meta":{"n":9007199254740992}',
    );
  });

  it("a number sent as text of few digits is written with them, not as the body writes its double elsewhere", async () => {
    // 100000000000000000000 and 100000000000000000001 are one double, as are 5 and 5.0: by value,
    // the model's 10^20 reached the origin as the _meta's 10^20 + 1, and its 5 as 5.0 (which Go's
    // encoding/json refuses for an int).
    const { send } = await setUp();
    for (const [id, sent, meta] of [
      [30, "100000000000000000000", "100000000000000000001"],
      [31, "5", "5.0"],
    ] as const) {
      const received = await send(
        `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${DEMO_NAMES["files.read"]}","arguments":{"path":"p","max_bytes":"${sent}"},"_meta":{"n":${meta}}}}`,
      );
      expect(received, sent).toContain(
        `"arguments":{"path":"p","max_bytes":${sent}},"_meta":{"n":${meta}}`,
      );
    }
  });

  it("a number sent as text keeps its digits under a renamed key, in arguments sent as JSON text", async () => {
    // The object is read from text, its key coalesced and its value coerced: each rebuilds it.
    const { send } = await setUp();
    const received = await send(
      `{"jsonrpc":"2.0","id":34,"method":"tools/call","params":{"name":"${DEMO_NAMES["reports.query"]}","arguments":"{\\"Limit\\":\\"9007199254740993\\",\\"priority\\":\\"1\\"}","_meta":{"n":9007199254740992}}}`,
    );
    expect(received).toContain(
      '"arguments":{"limit":9007199254740993,"priority":1},"_meta":{"n":9007199254740992}',
    );
  });

  it("a call carried by call_tool as JSON text keeps its numbers' text, as a direct call's does", async () => {
    // Search mode (MAX_TOOLS 2). The tab escape keeps the body itself off the exact parse: only
    // the text call_tool carries writes numbers a double does not keep.
    const { proxy, session, received } = await demoSession({ vars: { MAX_TOOLS: "2" } });
    await messagesOf(await postJson(proxy, PROXY_URL, rpc("list", "tools/list"), session));
    const values = '"path":"p","max_bytes":\t9007199254740993,"big":\t1e400,"z":\t-0,"x":\t1.50';
    const carried = `{"name":"files.read","arguments":{${values}}}`;
    await messagesOf(
      await postJson(
        proxy,
        PROXY_URL,
        `{"jsonrpc":"2.0","id":35,"method":"tools/call","params":{"name":"call_tool","arguments":${JSON.stringify(carried)}}}`,
        session,
      ),
    );
    const calls = (await received()).filter((r) => r.body.includes('"tools/call"'));
    expect(calls.at(-1)?.body).toBe(
      '{"jsonrpc":"2.0","id":35,"method":"tools/call","params":{"name":"files.read","arguments":{"path":"p","max_bytes":9007199254740993,"big":1e400,"z":-0,"x":1.50}}}',
    );
  });

  it("a number sent as text that a double holds only rounded, or not at all, reaches the origin as sent", async () => {
    // Past a double's smallest, 1e-400 reads as 0: the model did not mean 0. Below its normal
    // numbers, a double keeps fewer digits than 15 (1.2347e-320 for 1.23456789e-320).
    const { send } = await setUp();
    for (const [id, amount] of [
      [32, "1e-400"],
      [33, "1.23456789e-320"],
    ] as const) {
      const received = await send(
        `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${DEMO_NAMES["catering.invoice"]}","arguments":{"payload_json":{"invoice_id":"I","amount":"${amount}"}}}}`,
      );
      expect(received, amount).toContain(`"amount":${amount}}`);
    }
  });
});

describe("a call the proxy changes reaches the origin as the client wrote it around what it changed", () => {
  // The name restored and `max_bytes` coerced: the origin reads every other byte as the client
  // wrote it. JSON.stringify writes keys without escapes, no space between tokens, and an
  // object's array-index keys first ({"b":1,"10":…,"2":…} as {"2":…,"10":…,"b":1}).
  const call = (name: string, maxBytes: string) =>
    `{ "jsonrpc": "2.0", "id": 40,\n  "method": "tools/call",\n  "params": {"name": ${name}, "arguments": {"p\\u0061th": "src/\\u00e9.ts", "max_bytes": ${maxBytes}, "ranges": {"b": 1, "10": [1.0, 2], "2": -0}},\n    "_meta": {"progressToken": "t\\/1", "7": 1E+2}}\n}`;
  const renamed = JSON.stringify(DEMO_NAMES["files.read"]);

  it("alone: its spacing, key escapes, array-index keys and _meta", async () => {
    const { send } = await setUp();
    expect(await send(call(renamed, '"512"'))).toBe(call('"files.read"', "512"));
  });

  it("arguments under a coalesced key, a value inside them coerced: the rest of them as written", async () => {
    const { send } = await setUp();
    const sent = `{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"${DEMO_NAMES["catering.invoice"]}","arguments":{"payload-json": {"invoice_id": "INV-\\u0031", "amount": "1.10", "lines": {"b": 1, "10": 2}}, "note": "x"}}}`;
    // The arguments' keys changed: written member by member, each member's text as it came.
    expect(await send(sent)).toBe(
      '{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"catering.invoice","arguments":{"payload_json":{"invoice_id": "INV-\\u0031", "amount": 1.10, "lines": {"b": 1, "10": 2}},"note":"x"}}}',
    );
  });

  it("with the byte order mark its body starts with, as it came", async () => {
    // A body sent as it came keeps its BOM; one the proxy changed lost it, read with the JSON.
    const { send } = await setUp();
    expect(await send(`\uFEFF${call(renamed, '"512"')}`)).toBe(
      `\uFEFF${call('"files.read"', "512")}`,
    );
  });

  it("in a batch: the notification beside it as it came", async () => {
    const { send } = await setUp();
    const note =
      '{"jsonrpc":"2.0", "method":"notifications/progress", "params":{"progressToken":"x", "z":1, "3":0.1000000000000000055511151231257827}}';
    expect(await send(`[${call(renamed, '"512"')},\r\n ${note}]`)).toBe(
      `[${call('"files.read"', "512")},\r\n ${note}]`,
    );
  });
});

describe("members of params the proxy does not know, beside the arguments, reach the origin as written", () => {
  // A later revision's field, a vendor's extension: the origin got them without the proxy.
  const unknown =
    '"x-vendor": {"trace": 12345678901234567890, "k\\u0061": [1.0, 2]}, "hint": 1E+2, "args": {"path": "b"}';

  it("in a call the proxy changes: renamed, a value coerced, every other member as the client wrote it", async () => {
    const { send } = await setUp();
    const call = (name: string, maxBytes: string) =>
      `{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"${name}", ${unknown}, "arguments": {"path": "a", "max_bytes": ${maxBytes}}, "_meta": {"progressToken": 1}}}`;
    expect(await send(call(DEMO_NAMES["files.read"], '"512"'))).toBe(call("files.read", "512"));
  });

  it("beside arguments sent as JSON text, which become the object it holds", async () => {
    const { send } = await setUp();
    const received = await send(
      `{"jsonrpc":"2.0","id":51,"method":"tools/call","params":{"name":"${DEMO_NAMES["files.read"]}", ${unknown}, "arguments": "{\\"path\\":\\"a\\"}"}}`,
    );
    expect(received).toBe(
      `{"jsonrpc":"2.0","id":51,"method":"tools/call","params":{"name":"files.read", ${unknown}, "arguments": {"path":"a"}}}`,
    );
  });

  it("in a call nothing else changes: the body as sent, and no repair logged", async () => {
    const { send } = await setUp();
    const logs = captureLogs();
    const body = `{"jsonrpc":"2.0","id":52,"method":"tools/call","params":{"name":"get-weather", "arguments": {"city": "Oslo"}, ${unknown}}}`;
    expect(await send(body)).toBe(body);
    expect(logs.events("tool_call_repaired")).toEqual([]);
    logs.restore();
  });

  it("but not one a lenient reader takes for a member of the call's own: refused 400, the origin not called", async () => {
    // Go's encoding/json (mcp-go; the Go SDK before its fix also cut a key at a NUL) reads
    // `_Meta` as `_meta`: the proxy read no `_meta` (no revision claim to hold the header to),
    // the origin one; as a task (`TASK`), a call the proxy took for a plain one. Refused as any
    // message's member the proxy reads so spelled is (docs/errors.md).
    const { proxy, session, received } = await demoSession();
    await messagesOf(await postJson(proxy, PROXY_URL, rpc("list", "tools/list"), session));
    const calls = async () =>
      (await received()).filter((r) => r.body.includes('"tools/call"')).length;
    const before = await calls();
    for (const [id, member, reads] of [
      [56, "_Meta", "_meta"],
      [57, "TASK", "task"],
      [58, "requestſtate", "requestState"],
      [59, "inputResponses\\u0000", "inputResponses"],
      [60, "ARGS", "args"],
    ] as const) {
      const body = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"get-weather","arguments":{"city":"Oslo"},"${member}":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}`;
      const response = await postJson(proxy, PROXY_URL, body, session);
      expect(response.status, member).toBe(400);
      const written = JSON.stringify(JSON.parse(`"${member}"`));
      expect(await response.json(), member).toEqual({
        jsonrpc: "2.0",
        id,
        error: {
          code: -32602,
          message: `Invalid params: params write the key ${written}, which lenient readers take for "${reads}"; write it as MCP does, or leave it out`,
        },
      });
    }
    expect(await calls()).toBe(before);
  });

  it("but not in the call call_tool carries: the model's are not the client's, and call_tool's own are not that call's", async () => {
    // Search mode (MAX_TOOLS 2): the model wrote call_tool's arguments, members beside the
    // carried `arguments` too; the client's beside call_tool's would be arguments of a carried
    // call whose model wrote them inline.
    const { proxy, session, received } = await demoSession({ vars: { MAX_TOOLS: "2" } });
    await messagesOf(await postJson(proxy, PROXY_URL, rpc("list", "tools/list"), session));
    // An `args` is one more of them: beside the model's `arguments`, as beside call_tool's.
    for (const [id, carried, beside] of [
      [53, '{"name":"files.read","arguments":{"path":"p"},"hint":1,"args":{}}', ""],
      [54, '{"name":"files.read","arguments":"{\\"path\\":\\"p\\"}","hint":1}', ""],
      [55, '{"name":"files.read","path":"p"}', ""],
      [61, '{"name":"files.read","path":"p"}', ',"args":{"path":"/etc/passwd"}'],
      [62, '{"name":"files.read","arguments":{"path":"p"},"args":{"path":"q"}}', ',"args":{}'],
    ] as const) {
      const body = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"call_tool","arguments":${carried},"x-vendor":2${beside}}}`;
      await messagesOf(await postJson(proxy, PROXY_URL, body, session));
      const calls = (await received()).filter((r) => r.body.includes('"tools/call"'));
      expect(JSON.parse(calls.at(-1)?.body ?? "{}").params, carried + beside).toEqual({
        name: "files.read",
        arguments: { path: "p" },
      });
    }
  });
});

describe("a number sent for a string is the string of its text", () => {
  it("a 64-bit id, a trailing zero, a number past a double's range: as the client wrote them", async () => {
    const { send } = await setUp();
    for (const [id, number] of [
      [10, "1234567890123456789"],
      [11, "1.50"],
      [12, "1e400"],
      [13, "-0"],
    ] as const) {
      const received = await send(
        `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${DEMO_NAMES["files.read"]}","arguments":{"path":${number}}}}`,
      );
      expect(received, number).toContain(`"arguments":{"path":"${number}"}`);
    }
    // Inline, and as JSON text: the text is known there too.
    const inline = await send(
      `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"${DEMO_NAMES["files.read"]}","path":1234567890123456789}}`,
    );
    expect(inline).toContain('"arguments":{"path":"1234567890123456789"}');
    const text = await send(
      `{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"${DEMO_NAMES["files.read"]}","arguments":"{\\"path\\":1.50}"}}`,
    );
    expect(text).toContain('"arguments":{"path":"1.50"}');
    // An object made a string: its values' text kept inside it.
    const object = await send(
      `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"${DEMO_NAMES["files.read"]}","arguments":{"path":{"id":1234567890123456789}}}}`,
    );
    expect(object).toContain('"arguments":{"path":"{\\"id\\":1234567890123456789}"}');
  });

  it("a number made the one element of an array keeps its text, though the body writes the same double otherwise", async () => {
    // `columns` is an array of strings: a lone number becomes `[number]`, then its element a
    // string. The array is new, so its element's text is known only by value, and the `_meta`
    // beside it writes the same double (9007199254740992) another way.
    const { send } = await setUp();
    const received = await send(
      `{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"${DEMO_NAMES["reports.query"]}","arguments":{"limit":5,"columns":9007199254740993},"_meta":{"n":9007199254740992}}}`,
    );
    expect(received).toContain('"arguments":{"limit":5,"columns":["9007199254740993"]}');
  });

  it("a string made the one element of an array keeps its escapes", async () => {
    // The array is new: its element is written as the text the string was read from where it was.
    const { send } = await setUp();
    const received = await send(
      `{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"${DEMO_NAMES["reports.query"]}","arguments":{"limit":5,"columns":"caf\\u00e9\\/x"}}}`,
    );
    expect(received).toContain('"arguments":{"limit":5,"columns":["caf\\u00e9\\/x"]}');
  });

  it("a number the body writes two ways is the string of the text written where it was", async () => {
    const { send } = await setUp();
    const received = await send(
      `{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"${DEMO_NAMES["files.read"]}","path":1.50,"note":1.5}}`,
    );
    expect(received).toContain('"arguments":{"path":"1.50","note":1.5}');
  });
});

describe("a value the operator's rules set is written as the operator wrote it", () => {
  it("not in the text the client wrote for a like value: the model's 2^53 + 1 is not the fixed 2^53", async () => {
    // 9007199254740993 and 9007199254740992 are one double; an origin that reads integers
    // exactly (Python, Go's int64) would read the model's own value as the fixed one.
    const rules = { tools: { "files.read": { fixed: { max_bytes: 9007199254740992 } } } };
    const { proxy, session, received } = await demoSession({
      vars: { TOOL_RULES: JSON.stringify(rules) },
    });
    await messagesOf(await postJson(proxy, PROXY_URL, rpc("list", "tools/list"), session));
    for (const [id, args] of [
      [1, '{"path":"p","max_bytes":9007199254740993}'],
      [2, '{"path":"p","maxBytes":9007199254740993}'],
      [3, '{"path":"p","note":4096.0,"other":9007199254740993}'],
    ] as const) {
      const body = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${DEMO_NAMES["files.read"]}","arguments":${args}}}`;
      await messagesOf(await postJson(proxy, PROXY_URL, body, session));
      const call = (await received()).filter((r) => r.body.includes('"tools/call"')).at(-1);
      expect(call?.body, args).toContain('"max_bytes":9007199254740992');
    }
    // The client's own values keep their text beside it.
    const last = (await received()).filter((r) => r.body.includes('"tools/call"')).at(-1);
    expect(last?.body).toContain('"note":4096.0,"other":9007199254740993');
  });
});

describe("keys named like prototype members are data", () => {
  it("reach the origin inline, beside the arguments they are recovered with", async () => {
    const { send } = await setUp();
    const received = await send(
      `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"${DEMO_NAMES["files.read"]}","path":"p","constructor":1,"__proto__":{"a":1},"prototype":2}}`,
    );
    expect(received).toContain(
      '"arguments":{"path":"p","constructor":1,"__proto__":{"a":1},"prototype":2}',
    );
  });

  it("are fields inline, so a call with an `args` that is no object is not refused", async () => {
    const { send } = await setUp();
    const received = await send(
      `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"${DEMO_NAMES["files.read"]}","args":5,"constructor":1}}`,
    );
    expect(received).toContain('"arguments":{"constructor":1}');
  });

  it("pass through in _meta and nested arguments, in a call the proxy changes", async () => {
    const { send } = await setUp();
    const received = await send(
      `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"${DEMO_NAMES["files.read"]}","arguments":{"path":"p","opts":{"__proto__":{"x":1},"constructor":{"y":2}}},"_meta":{"__proto__":3}}}`,
    );
    expect(received).toBe(
      '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"files.read","arguments":{"path":"p","opts":{"__proto__":{"x":1},"constructor":{"y":2}}},"_meta":{"__proto__":3}}}',
    );
  });
});

describe("JSON-RPC validity", () => {
  it.each([
    ['{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}', "result and error"],
    ['{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}', "a code that is no integer"],
  ])("%s (%s) is refused with -32600", async (body) => {
    const { proxy, session } = await setUp();
    const response = await postJson(proxy, PROXY_URL, body, session);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: -32600 } });
  });
});

/** The origin's answer to a `tools/list` (id 1) as the proxy hands it to the client, under `openai`. */
async function rewrittenAnswer(
  origin: Response,
  memory = new ToolMapMemory(),
  at = "https://bytes.example/mcp",
) {
  const profile = profileOf("openai");
  const scope = await toolMapScopes(new URL(at), profile.names);
  const toolMap = new ToolMap(env.TOOL_MAP, scope, profile, memory, () => {});
  return rewriteResponse(origin, {
    listIds: new Set([1]),
    watchesListChanged: false,
    reads: new ReadBudget(),
    toolMap,
    addressee: unreadAddressee(new Headers()),
  });
}

describe("an answer the proxy reads but does not change is the origin's bytes", () => {
  async function throughRewrite(
    bytes: Uint8Array,
    contentType = "application/json",
    memory = new ToolMapMemory(),
  ) {
    const origin = new Response(bytes, {
      headers: { "content-type": contentType, "content-length": String(bytes.byteLength) },
    });
    const response = await rewrittenAnswer(origin, memory);
    return {
      bytes: new Uint8Array(await response.arrayBuffer()),
      length: response.headers.get("content-length"),
    };
  }

  const encode = (text: string) => new TextEncoder().encode(text);
  const error = '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"down"}}';

  it.each([
    ["with a UTF-8 byte order mark", new Uint8Array([0xef, 0xbb, 0xbf, ...encode(error)])],
    ["with invalid UTF-8", new Uint8Array([...encode(error.slice(0, -2)), 0xff, 0xfe, 0x7d, 0x7d])],
    ["that is no JSON", encode("Service Unavailable")],
  ])("an answer to a tools/list %s: same bytes, same length", async (_, sent) => {
    const { bytes, length } = await throughRewrite(sent);
    expect(bytes).toEqual(sent);
    expect(length).toBe(String(sent.byteLength));
  });

  it("a listing every tool of which stays as it came: same bytes, same length, named and then remembered", async () => {
    // A byte order mark, and a byte that is no UTF-8 in a description: text decoded and
    // encoded again would lose both.
    const sent = new Uint8Array([
      0xef,
      0xbb,
      0xbf,
      ...encode(
        '{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"read_file","description":"Caf',
      ),
      0xe9,
      ...encode(
        '","inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}]}}',
      ),
    ]);
    const memory = new ToolMapMemory();
    for (const pass of ["named", "remembered"]) {
      const { bytes, length } = await throughRewrite(sent, "application/json", memory);
      expect(bytes, pass).toEqual(sent);
      expect(length, pass).toBe(String(sent.byteLength));
    }
  });
});

describe("an answer the proxy renames keeps what surrounds its JSON as the origin wrote it", () => {
  // A body kept as it came keeps its BOM; one renamed lost it, decoded with the text.
  const listing = (name: string) =>
    `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"${name}","inputSchema":{"type":"object","properties":{}}}, {"name":"plain", "inputSchema":{"type":"object","properties":{}}}]}}\r\n`;
  const bom = [0xef, 0xbb, 0xbf];
  const encode = (text: string) => new TextEncoder().encode(text);

  it("a listing renamed: the byte order mark it starts with, and the space after it", async () => {
    const sent = new Uint8Array([...bom, ...encode(listing("files.read"))]);
    const response = await rewrittenAnswer(
      new Response(sent, { headers: { "content-type": "application/json" } }),
    );
    const bytes = new Uint8Array(await response.arrayBuffer());
    const renamed = listing("files_read");
    expect(new TextDecoder().decode(bytes)).toMatch(
      /^\{"jsonrpc":"2\.0","id":1,"result":\{"tools":\[\{"name":"files_read_\w+",/,
    );
    expect([...bytes.subarray(0, 3)]).toEqual(bom);
    expect(new TextDecoder().decode(bytes).replace(/files_read_\w+/, "files_read")).toBe(renamed);
  });
});

/** A scripted origin's listing of one tool, `files.read`, answered under the request's id. */
const FILES_LISTING = {
  status: 200,
  headers: [["Content-Type", "application/json"]] as [string, string][],
  body: '{"jsonrpc":"2.0","id":__ID__,"result":{"tools":[{"name":"files.read","inputSchema":{"type":"object","properties":{}}}]}}',
};

describe("the proxy's own answers to a batch whose other messages the origin accepted", () => {
  it("carry the origin's headers: its cookies, each apart, and what else it said", async () => {
    // A batch of a call the rules answer (a tool the caller's listing lacks) and a notification:
    // the origin accepts the notification with 202 and its headers (a load balancer's affinity
    // cookie, say), and the client's answer is the proxy's. It went without them.
    const origin = await scriptedOrigin(
      {
        "tools/list": FILES_LISTING,
      },
      "__ID__",
      {
        status: 202,
        headers: [
          ["Set-Cookie", "AWSALB=abc; Path=/; Expires=Wed, 21 Oct 2037 07:28:00 GMT"],
          ["Set-Cookie", "other=1; Path=/"],
          ["X-Request-Id", "r-1"],
          ["ETag", '"202"'],
        ],
        body: "",
      },
    );
    const proxy = viaProxy({
      ORIGIN_URL: origin.originUrl,
      TOOL_RULES: JSON.stringify({ hide: ["secret.*"] }),
    });
    const response = await proxy(PROXY_URL, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: '[{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{}}},{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}]',
    });
    expect(response.status).toBe(200);
    const answers = (await response.json()) as { id: number }[];
    expect(answers.map((answer) => answer.id)).toEqual([7]);
    expect(response.headers.getSetCookie()).toEqual([
      "AWSALB=abc; Path=/; Expires=Wed, 21 Oct 2037 07:28:00 GMT",
      "other=1; Path=/",
    ]);
    expect(response.headers.get("x-request-id")).toBe("r-1");
    // What described the origin's (empty) body does not describe the proxy's.
    expect(response.headers.get("etag")).toBeNull();
    expect(response.headers.get("content-type")).toBe("application/json");
  });
});

describe("the listing the proxy asks for on a 2026-07-28 call's behalf", () => {
  it("carries the client's envelope as the client wrote it: an integer past 2^53, escapes", async () => {
    // The envelope is copied from the call that missed; written by JSON.stringify, a capability's
    // 12345678901234567891 reached the origin as 12345678901234567000, a number the client never sent.
    const origin = await scriptedOrigin(
      {
        "tools/list": FILES_LISTING,
        "tools/call": {
          status: 200,
          headers: [["Content-Type", "application/json"]],
          body: '{"jsonrpc":"2.0","id":__ID__,"result":{"content":[]}}',
        },
      },
      "__ID__",
    );
    const proxy = viaProxy({ ORIGIN_URL: origin.originUrl });
    const capabilities = '{"experimental":{"x":{"n":12345678901234567891,"r":1.50,"s":"\\u00e9"}}}';
    const info = '{"name":"c\\u0031","version":"1.0"}';
    const meta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":${capabilities},"io.modelcontextprotocol/clientInfo":${info},"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0\\u0031"}`;
    const response = await proxy(PROXY_URL, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "files_read",
      },
      body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"files_read","arguments":{},"_meta":${meta}}}`,
    });
    await response.arrayBuffer();
    const listing = (await origin.received()).find((r) => r.body.includes('"tools/list"'));
    expect(listing?.body).toContain(`"io.modelcontextprotocol/clientCapabilities":${capabilities}`);
    expect(listing?.body).toContain(`"io.modelcontextprotocol/clientInfo":${info}`);
    expect(listing?.body).toContain('-0\\u0031"');
  });
});

describe("a request the proxy rewrites carries no header that describes the client's bytes", () => {
  // RFC 9530's digests and the obsolete ones: an origin that checks one refused the repaired call,
  // and the proxy's own listing sent the client's digest with a body the client never wrote.
  const described = {
    "content-digest": "sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=:",
    "repr-digest": "sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=:",
    digest: "SHA-256=RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=",
    "content-md5": "Q2hlY2sgSW50ZWdyaXR5IQ==",
  };
  const call = (id: number) =>
    rpc(id, "tools/call", { name: DEMO_NAMES["files.read"], arguments: { path: "p" } });

  it("a call renamed goes without them; a body sent as it came keeps them", async () => {
    const { proxy, session, received } = await demoSession();
    await messagesOf(await postJson(proxy, PROXY_URL, rpc("list", "tools/list"), session));
    await messagesOf(await postJson(proxy, PROXY_URL, call(1), { ...session, ...described }));
    await messagesOf(
      await postJson(proxy, PROXY_URL, rpc(2, "ping"), { ...session, ...described }),
    );
    const sent = await received();
    const renamed = sent.find((r) => r.body.includes('"tools/call"'));
    const asSent = sent.find((r) => r.body.includes('"ping"'));
    for (const name of Object.keys(described)) {
      expect(renamed?.headers, name).not.toHaveProperty(name);
      expect(asSent?.headers, name).toHaveProperty(name);
    }
  });

  it("nor does the listing the proxy asks for itself on a call's behalf", async () => {
    const { proxy, session, received } = await demoSession();
    await messagesOf(await postJson(proxy, PROXY_URL, call(1), { ...session, ...described }));
    const relist = (await received()).find((r) => r.body.includes("mcp-edge-rewriter/relist/"));
    expect(relist).toBeDefined();
    for (const name of Object.keys(described))
      expect(relist?.headers, name).not.toHaveProperty(name);
  });
});

describe("an answer the proxy rewrites carries no header that describes the origin's bytes", () => {
  // A client that checks a digest, or revalidates by ETag, would hold the rewritten body to the
  // origin's bytes; what describes the resource (Last-Modified, Cache-Control) still holds.
  const DESCRIBE_BYTES = {
    etag: '"v1"',
    "content-md5": "Q2hlY2sgSW50ZWdyaXR5IQ==",
    digest: "sha-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=",
    "content-digest": "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:",
    "repr-digest": "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:",
  };
  const listing = (renamed: boolean) =>
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      result: {
        tools: [
          {
            name: renamed ? "files.read" : "files_read",
            inputSchema: { type: "object", properties: {} },
          },
        ],
      },
    });

  async function answered(body: string, contentType: string) {
    const origin = new Response(body, {
      headers: {
        "content-type": contentType,
        "last-modified": "Sun, 29 Nov 2026 10:00:00 GMT",
        ...DESCRIBE_BYTES,
      },
    });
    const response = await rewrittenAnswer(origin, undefined, "https://digests.example/mcp");
    return { text: await response.text(), headers: response.headers };
  }

  it("a JSON body renamed: none of them; kept as it came: all of them", async () => {
    const renamed = await answered(listing(true), "application/json");
    expect(renamed.text).toContain('"files_read');
    for (const name of Object.keys(DESCRIBE_BYTES))
      expect(renamed.headers.has(name), name).toBe(false);
    expect(renamed.headers.get("last-modified")).toBe("Sun, 29 Nov 2026 10:00:00 GMT");

    const kept = await answered(listing(false), "application/json");
    expect(kept.text).toBe(listing(false));
    for (const [name, value] of Object.entries(DESCRIBE_BYTES)) {
      expect(kept.headers.get(name), name).toBe(value);
    }
  });

  it("an event stream whose listings the proxy reads: none of them, its bytes not known when its headers are sent", async () => {
    const renamed = await answered(
      `event: message\ndata: ${listing(true)}\n\n`,
      "text/event-stream",
    );
    expect(renamed.text).toContain('"files_read');
    for (const name of Object.keys(DESCRIBE_BYTES))
      expect(renamed.headers.has(name), name).toBe(false);
    expect(renamed.headers.get("last-modified")).toBe("Sun, 29 Nov 2026 10:00:00 GMT");
  });
});

describe("the proxy's own answers carry the origin's numbers as it wrote them", () => {
  // A search's matches, as structured content beside the text: each schema is the origin's, whose
  // 64-bit id JSON.parse reads as the double 12345678901234567000.
  async function searchAnswer() {
    const profile = profileOf("openai", { maxTools: 1 });
    const scope = await toolMapScopes(
      new URL(`https://search-${crypto.randomUUID()}.example/mcp`),
      profile.names,
    );
    const toolMap = new ToolMap(env.TOOL_MAP, scope, profile, new ToolMapMemory(), () => {});
    const listing =
      '{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"pay.send","description":"Pays from an account.","inputSchema":{"type":"object","properties":{"from":{"type":"integer","enum":[12345678901234567891]}}}},{"name":"notes.read","inputSchema":{"type":"object"}}]}}';
    await rewriteJsonText(listing, { listIds: new Set([1]), wholeListing: WHOLE_LISTING, toolMap });
    const search = await toolMap.search();
    if (!search) throw new Error("no search mode");
    const call = {
      jsonrpc: "2.0" as const,
      id: 2,
      method: "tools/call",
      params: { name: "search_tools", arguments: { query: "pays account", limit: 1 } },
    };
    return answerSearch(call, search, revisionOf(new Headers()), 1 << 20).response;
  }

  const structuredEnum = (text: string) =>
    /"structuredContent":\{"tools":\[.*"enum":\[(\d+)\]/.exec(text)?.[1];

  it("a search answered alone: its structured content too", async () => {
    const text = await localAnswer([await searchAnswer()], false).text();
    expect(structuredEnum(text)).toBe("12345678901234567891");
  });

  it("a search answered before the origin's event stream", async () => {
    const origin = new Response('event: message\ndata: {"jsonrpc":"2.0","id":3,"result":{}}\n\n', {
      headers: { "content-type": "text/event-stream" },
    });
    const response = await rewriteResponse(origin, {
      listIds: new Set(),
      watchesListChanged: false,
      reads: new ReadBudget(),
      toolMap: new ToolMap(
        env.TOOL_MAP,
        await toolMapScopes(new URL("https://other.example/mcp"), profileOf("openai").names),
        profileOf("openai"),
        new ToolMapMemory(),
        () => {},
      ),
      addressee: { ...unreadAddressee(new Headers()), batch: true, ids: [2, 3] },
      localResponses: [await searchAnswer()],
    });
    expect(structuredEnum(await response.text())).toBe("12345678901234567891");
  });
});
