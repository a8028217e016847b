/**
 * Remembered listings (src/rewrite/remembered-answer.ts): the same answer
 * text, id aside, gets the same rewritten text without being parsed or named
 * again; anything else takes the full path.
 */
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { unreadAddressee } from "../../src/protocol/jsonrpc";
import { rewriteJsonText } from "../../src/rewrite/listing-answer";
import { reuseAnswer, reuseAnswerBytes } from "../../src/rewrite/remembered-answer";
import { rewriteResponse } from "../../src/rewrite/response";
import { NO_POLICY, type ToolPolicy } from "../../src/rules/tool-rules";
import { profileOf } from "../../src/schemas/profile";
import { ToolMapMemory, toolMapScopes } from "../../src/toolmap/isolate-memory";
import { answerBytes } from "../../src/toolmap/stored-map";
import { ToolMap } from "../../src/toolmap/tool-map";
import { ReadBudget } from "../../src/transport/read-bounded";
import { realisticListing, WHOLE_LISTING } from "../../support/listing";

const answer = (id: number | string, tools = realisticListing(50).tools) =>
  // The key order of the SDK's servers, and a number the runtime's JSON would rewrite.
  `{"result":{"tools":${JSON.stringify(tools)},"_meta":{"big":9007199254740993}},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;

async function isolate(origin = `https://o.example/mcp?${crypto.randomUUID()}`) {
  const profile = profileOf("openai");
  const scopes = await toolMapScopes(new URL(origin), profile.names);
  const memory = new ToolMapMemory();
  return () => new ToolMap(env.TOOL_MAP, scopes, profile, memory, () => {});
}

/** Isolates of one deployment (`deployment`: its version id), sharing the test's KV; each request's writes awaited. */
function deployment(id: string, origin: string, policy: ToolPolicy = NO_POLICY) {
  return async () => {
    const profile = profileOf("openai");
    const scopes = await toolMapScopes(new URL(origin), profile.names);
    const memory = new ToolMapMemory();
    return async (text: string, listId: number) => {
      const writes: Promise<unknown>[] = [];
      const map = new ToolMap(
        env.TOOL_MAP,
        scopes,
        profile,
        memory,
        (w) => writes.push(w),
        policy,
        id,
      );
      const naming = vi.spyOn(map, "nameListing");
      const out = await rewriteJsonText(text, {
        listIds: new Set([listId]),
        wholeListing: WHOLE_LISTING,
        toolMap: map,
      });
      await Promise.all(writes);
      return { out, named: naming.mock.calls.length > 0 };
    };
  };
}

describe("a remembered answer", () => {
  it("is reused for the same text with another id, written as the full path writes it", async () => {
    const toolMap = await isolate();
    const first = await rewriteJsonText(answer(1), {
      listIds: new Set([1]),
      wholeListing: WHOLE_LISTING,
      toolMap: toolMap(),
    });
    const map = toolMap();
    const naming = vi.spyOn(map, "nameListing");
    const again = await rewriteJsonText(answer("req-2"), {
      listIds: new Set(["req-2"]),
      wholeListing: WHOLE_LISTING,
      toolMap: map,
    });
    expect(naming).not.toHaveBeenCalled();
    const fresh = await isolate();
    const full = await rewriteJsonText(answer("req-2"), {
      listIds: new Set(["req-2"]),
      wholeListing: WHOLE_LISTING,
      toolMap: fresh(),
    });
    expect(again).toBe(full);
    expect(first?.replace('"id":1', '"id":"req-2"')).toBe(again);
    expect(again).toContain("9007199254740993");
  });

  // The body's bytes against the remembered answer's: a JSON body is neither decoded nor
  // its answer encoded again (for 1,000 tools, 3 ms and more in Node).
  it("is reused for a JSON body's bytes as they came, answered with the same bytes the full path writes", async () => {
    const toolMap = await isolate();
    const respond = async (text: string, id: string | number, map: ToolMap) => {
      const response = await rewriteResponse(
        new Response(new TextEncoder().encode(text), {
          headers: { "content-type": "application/json" },
        }),
        {
          listIds: new Set([id]),
          wholeListing: WHOLE_LISTING,
          watchesListChanged: false,
          reads: new ReadBudget(),
          toolMap: map,
          addressee: { ...unreadAddressee(new Headers()), ids: [id] },
        },
      );
      return new Uint8Array(await response.arrayBuffer());
    };
    const first = await respond(answer(1), 1, toolMap());
    const decoding = vi.spyOn(TextDecoder.prototype, "decode");
    const map = toolMap();
    const naming = vi.spyOn(map, "nameListing");
    const again = await respond(answer("req-2"), "req-2", map);
    expect(naming).not.toHaveBeenCalled();
    expect(decoding.mock.calls.filter(([bytes]) => (bytes?.byteLength ?? 0) > 1000)).toEqual([]);
    decoding.mockRestore();
    const full = await respond(answer("req-2"), "req-2", (await isolate())());
    expect(again).toEqual(full);
    expect(new TextDecoder().decode(first).replace('"id":1', '"id":"req-2"')).toBe(
      new TextDecoder().decode(again),
    );
    // One byte more, or an id that is no token: the full path.
    for (const other of [`${answer(3)} `, answer('a"b')]) {
      const named = toolMap();
      const renaming = vi.spyOn(named, "nameListing");
      await respond(other, other.endsWith(" ") ? 3 : 'a"b', named);
      expect(renaming).toHaveBeenCalled();
    }
  });

  it("is not reused for another listing, an id not asked for, or after the origin said its tools changed", async () => {
    const toolMap = await isolate();
    await rewriteJsonText(answer(1), {
      listIds: new Set([1]),
      wholeListing: WHOLE_LISTING,
      toolMap: toolMap(),
    });
    const namedAgain = async (text: string, id: number, forget = false) => {
      const map = toolMap();
      if (forget) map.forget();
      const naming = vi.spyOn(map, "nameListing");
      await rewriteJsonText(text, {
        listIds: new Set([id]),
        wholeListing: WHOLE_LISTING,
        toolMap: map,
      });
      return naming.mock.calls.length;
    };
    const other = realisticListing(51).tools;
    expect(await namedAgain(answer(2, other), 2)).toBe(1);
    expect(await namedAgain(answer(3, other), 3)).toBe(0);
    expect(await namedAgain(answer(4, other), 4, true)).toBe(1);
    // An answer to no listing asked for is left as it is.
    expect(
      await rewriteJsonText(answer(6, other), {
        listIds: new Set([7]),
        wholeListing: WHOLE_LISTING,
        toolMap: toolMap(),
      }),
    ).toBe(undefined);
  });

  it("is reused for a listing past 2 Mi characters: the isolate's answers are bounded together", async () => {
    const toolMap = await isolate();
    const tools = realisticListing(3_000).tools;
    expect(answer(1, tools).length).toBeGreaterThan(2 * 1024 * 1024);
    await rewriteJsonText(answer(1, tools), {
      listIds: new Set([1]),
      wholeListing: WHOLE_LISTING,
      toolMap: toolMap(),
    });
    const map = toolMap();
    const naming = vi.spyOn(map, "nameListing");
    await rewriteJsonText(answer(2, tools), {
      listIds: new Set([2]),
      wholeListing: WHOLE_LISTING,
      toolMap: map,
    });
    expect(naming).not.toHaveBeenCalled();
  });

  it("is reused only for the very text it was made from, id aside: a change at either end is another listing", () => {
    const remembered = {
      received: ['{"jsonrpc":"2.0","id":', ',"result":{"tools":[]}}'] as [string, string],
      sent: ["<", ">"] as [string, string],
    };
    const reuse = (text: string) => reuseAnswer(text, remembered, () => true);
    expect(reuse('{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}')).toEqual({ text: "<7>", id: 7 });
    for (const other of [
      ' {"jsonrpc":"2.0","id":7,"result":{"tools":[]}}',
      '{"jsonrpc":"2.0","id":7,"result":{"tools":[]}} ',
      '{"jsonrpc":"2.0","id":7,"result":{"tools":[1]}}',
      '{"jsonrpc":"2.0","id":7,"x":1,"result":{"tools":[]}}',
      '{"jsonrpc":"2.0","id":,"result":{"tools":[]}}',
      '{"jsonrpc":"2.0","id":7.0,"result":{"tools":[]}}',
    ]) {
      expect(reuse(other)).toBeUndefined();
    }
  });

  it("reads an id only as JSON reads it, and never throws, whatever the origin wrote there (property)", () => {
    const [before, after] = ['{"jsonrpc":"2.0","id":', ',"result":{"tools":[]}}'];
    const remembered = {
      received: [before, after] as [string, string],
      sent: ["<", ">"] as [string, string],
    };
    const written = fc.oneof(
      fc.json(),
      fc.string({
        unit: fc.constantFrom(
          "0",
          "1",
          "9",
          "-",
          '"',
          "\\",
          "\t",
          "\n",
          "\u0000",
          "a",
          ".",
          "e",
          ",",
        ),
        maxLength: 8,
      }),
    );
    fc.assert(
      fc.property(written, (id) => {
        const text = before + id + after;
        const reused = reuseAnswer(text, remembered, () => true);
        if (reused !== undefined) expect(reused.id).toEqual(JSON.parse(text).id);
      }),
      { numRuns: 5_000 },
    );
    // Written as the remembered text's form allows, but not JSON: a zero first, a raw tab.
    expect(() => reuseAnswer(`${before}01${after}`, remembered, () => true)).not.toThrow();
    expect(() => reuseAnswer(`${before}"a\tb"${after}`, remembered, () => true)).not.toThrow();
  });

  it("as bytes, is reused exactly where it is as text, and answers the same (property)", () => {
    const text = fc.string({ unit: "grapheme", maxLength: 12 });
    const id = fc.oneof(
      fc.integer().map(String),
      fc.string({ unit: "grapheme", maxLength: 6 }).map((value) => JSON.stringify(value)),
      fc.string({ unit: "grapheme", maxLength: 6 }),
    );
    const encoder = new TextEncoder();
    let reused = 0;
    fc.assert(
      fc.property(text, text, text, text, id, fc.boolean(), (a, b, c, d, written, once) => {
        const received: [string, string] = [`{"id":${a}`, `${b}}`];
        const remembered = { received, sent: once ? received : ([c, d] as [string, string]) };
        const body = received[0] + written + received[1];
        const asText = reuseAnswer(body, remembered, () => true);
        const asBytes = reuseAnswerBytes(encoder.encode(body), answerBytes(remembered), () => true);
        // Bytes leave to the text path only an id of other than ASCII characters.
        expect(asBytes === undefined).toBe(asText === undefined || /[^\0-\x7f]/.test(written));
        if (asBytes === undefined || asText === undefined) return;
        reused++;
        expect(asBytes.id).toEqual(asText.id);
        // Each part is a whole text's UTF-8: decoded one by one, they read as the answer.
        const sent = asBytes.parts.map((part) => new TextDecoder().decode(part)).join("");
        expect(sent).toBe(asText.text);
      }),
      { numRuns: 3_000 },
    );
    // Not vacuous: a share is reused both ways (1,068 to 1,246 of 3,000 across 60 seeds, a standard
    // deviation of 31), never fewer than half as many.
    expect(reused).toBeGreaterThan(550);
  });

  it("never keeps a listing from being renamed, whatever its id looks like", async () => {
    const toolMap = await isolate();
    const text = answer(1).replace(/"id":1}$/, '"id":1.0}');
    const renamed = await rewriteJsonText(text, {
      listIds: new Set([1]),
      wholeListing: WHOLE_LISTING,
      toolMap: toolMap(),
    });
    expect(renamed).toMatch(/"id":1\.0}$/);
    expect(renamed).not.toBe(text);
  });
});

describe("an answer remembered in KV", () => {
  it("answers a new isolate of the same deployment, which names nothing", async () => {
    const origin = `https://o.example/mcp?${crypto.randomUUID()}`;
    const isolates = deployment("version-1", origin);
    const first = await (await isolates())(answer(1), 1);
    expect(first.named).toBe(true);
    const second = await (await isolates())(answer(2), 2);
    expect(second.named).toBe(false);
    expect(second.out).toBe(first.out?.replace(/"id":1}$/, '"id":2}'));
  });

  it("lets a new isolate send the origin's own text on where the listing went as it came", async () => {
    const origin = `https://o.example/mcp?${crypto.randomUUID()}`;
    const isolates = deployment("version-1", origin);
    const asItCame = [
      {
        name: "read_file",
        inputSchema: { type: "object" as const, properties: { path: { type: "string" } } },
      },
    ];
    // `undefined`: nothing to write, the origin's bytes go on.
    const first = await (await isolates())(answer(1, asItCame), 1);
    expect(first).toEqual({ out: undefined, named: true });
    const second = await (await isolates())(answer(2, asItCame), 2);
    expect(second).toEqual({ out: undefined, named: false });
  });

  it("is not reused by another deployment, other settings, or for another listing", async () => {
    const origin = `https://o.example/mcp?${crypto.randomUUID()}`;
    await (await deployment("version-1", origin)())(answer(1), 1);
    expect((await (await deployment("version-2", origin)())(answer(2), 2)).named).toBe(true);
    const holding = { ...NO_POLICY, changes: "hold" as const };
    expect((await (await deployment("version-1", origin, holding)())(answer(3), 3)).named).toBe(
      true,
    );
    const other = answer(4, realisticListing(51).tools);
    expect((await (await deployment("version-1", origin)())(other, 4)).named).toBe(true);
  });

  it("is kept there when the isolate keeps it and its text fits a KV value (25 MiB of UTF-8), with no error either way", async () => {
    const log = vi.spyOn(console, "log");
    const Mi = 1024 * 1024;
    for (const [chars, character, asItCame, inIsolate, inKv] of [
      [3 * Mi, "x", false, true, true],
      [12 * Mi, "x", false, true, true],
      // 2 bytes each: 4 MiB, encoded whole rather than a part at a time.
      [2 * Mi, "é", false, true, true],
      // 3 bytes each: 27 MiB.
      [9 * Mi, "€", false, true, false],
      // Over the isolate's 16 Mi: a new isolate would read it only to drop it.
      [17 * Mi, "x", false, false, false],
      // Sent as it came: one text, held and stored once (14 Mi, and 18 MiB of UTF-8).
      [14 * Mi, "x", true, true, true],
      [6 * Mi, "€", true, true, true],
    ] as const) {
      const origin = `https://o.example/mcp?${crypto.randomUUID()}`;
      const profile = profileOf("openai");
      const scopes = await toolMapScopes(new URL(origin), profile.names);
      const writes: Promise<unknown>[] = [];
      const memory = new ToolMapMemory();
      const open = (within: ToolMapMemory) =>
        new ToolMap(env.TOOL_MAP, scopes, profile, within, (w) => writes.push(w), NO_POLICY, "v1");
      // `chars` in all; parts of other lengths, so the value's header places each one.
      const part = character.repeat(asItCame ? chars / 2 : chars / 4);
      const received: [string, string] = [`${part}a`, part];
      const answer = asItCame
        ? { received, sent: received }
        : { received, sent: [part, `b${part}c`] as [string, string] };
      open(memory).rememberAnswer(answer);
      await Promise.all(writes);
      expect((await open(memory).rememberedAnswer()) !== undefined).toBe(inIsolate);
      const stored = await env.TOOL_MAP.list({ prefix: `${scopes.origin}:answer:` });
      expect(stored.keys.length > 0).toBe(inKv);
      expect(await open(new ToolMapMemory()).rememberedAnswer()).toEqual(inKv ? answer : undefined);
    }
    expect(log.mock.calls.flat().join("\n")).not.toContain("kv_error");
  });

  it("is not read or written without a deployment id", async () => {
    const origin = `https://o.example/mcp?${crypto.randomUUID()}`;
    const before = await env.TOOL_MAP.list();
    const toolMap = await isolate(origin);
    await rewriteJsonText(answer(1), {
      listIds: new Set([1]),
      wholeListing: WHOLE_LISTING,
      toolMap: toolMap(),
    });
    const after = await env.TOOL_MAP.list();
    expect(after.keys.filter((key) => key.name.includes(":answer:"))).toEqual(
      before.keys.filter((key) => key.name.includes(":answer:")),
    );
  });
});
