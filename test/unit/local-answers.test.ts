/**
 * The proxy's own answers to one request stay within MAX_LOCAL_ANSWER_BYTES
 * as written (rewrite/local-answers.ts), whatever the calls, their ids and
 * the answers' characters.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { JsonRpcMessage, JsonRpcRequest } from "../../src/protocol/jsonrpc";
import { revisionOf } from "../../src/protocol/revision";
import { jsonBytes, LocalAnswers } from "../../src/rewrite/local-answers";
import { serializeEvent } from "../../src/transport/sse";

const encoder = new TextEncoder();
const bytesOf = (text: string) => encoder.encode(text).byteLength;

describe("jsonBytes", () => {
  it("is the UTF-8 length of the JSON text, whatever its characters", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ unit: "grapheme" }), (value, text) => {
        expect(jsonBytes(value)).toBe(bytesOf(JSON.stringify(value)));
        // Lone surrogates included: JSON.stringify escapes them.
        const lone = `${text}\ud800${text}\udfff`;
        expect(jsonBytes(lone)).toBe(bytesOf(JSON.stringify(lone)));
      }),
    );
  });
});

describe("LocalAnswers", () => {
  const call = (id: string | number): JsonRpcRequest => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "search_tools" },
  });
  const revision = revisionOf(new Headers({ "mcp-protocol-version": "2026-07-28" }));
  const LIMIT = 128 * 1024;
  /** Below what the setting allows, so that a few answers of some kilobytes pass it. */
  const SMALL_LIMIT = 16 * 1024;

  it("writes no more than its limit, as a batch and as an event stream, and answers every call", () => {
    const body = fc.array(
      fc.record({
        id: fc.oneof(fc.integer(), fc.string({ maxLength: 40 })),
        answered: fc.boolean(),
        // Texts of 400 to 6,400 characters of one to four bytes each, or escaped.
        text: fc
          .tuple(
            fc.string({
              unit: fc.constantFrom("a", "é", "€", "😀", '"', "\n", "\u0001"),
              minLength: 4,
              maxLength: 16,
            }),
            fc.integer({ min: 100, max: 400 }),
          )
          .map(([piece, times]) => piece.repeat(times)),
      }),
      { minLength: 4, maxLength: 32 },
    );
    let cutShort = 0;
    fc.assert(
      fc.property(body, (calls) => {
        const messages: JsonRpcMessage[] = calls.map(({ id }) => call(id));
        const answers = LocalAnswers.for(messages, revision, SMALL_LIMIT);
        if (!answers) throw new Error("short ids leave room for every call");
        let answered = 0;
        for (const [index, { answered: local, text }] of calls.entries()) {
          const message = messages[index] as JsonRpcRequest;
          // Every call is opened, in order, whether the proxy answers it or forwards it.
          answers.open(message);
          if (!local) continue;
          answered++;
          answers.add(message, { jsonrpc: "2.0", id: message.id, result: { text } });
        }
        expect(answers.responses).toHaveLength(answered);
        if (JSON.stringify(answers.responses).includes("MAX_LOCAL_ANSWER_BYTES")) cutShort++;
        expect(bytesOf(JSON.stringify(answers.responses))).toBeLessThanOrEqual(SMALL_LIMIT);
        const stream = answers.responses
          .map((response) => serializeEvent({ event: "message", data: JSON.stringify(response) }))
          .join("");
        expect(bytesOf(stream)).toBeLessThanOrEqual(SMALL_LIMIT);
      }),
      { numRuns: 30 },
    );
    // Not vacuous: some bodies' answers passed the limit.
    expect(cutShort).toBeGreaterThan(0);
  });

  it("refuses a body whose calls' short errors alone would pass it", () => {
    const messages = Array.from({ length: 256 }, (_, index) =>
      call(`${index}`.padStart(1000, "0")),
    );
    expect(LocalAnswers.for(messages, revision, LIMIT)).toBeUndefined();
    expect(LocalAnswers.for(messages.slice(0, 64), revision, LIMIT)).toBeDefined();
  });
});
