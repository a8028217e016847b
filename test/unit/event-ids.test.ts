/**
 * Gate mode's event ids bound to the user (transport/event-ids.ts): each `id`
 * field's value is rewritten, every other byte of the stream is the origin's,
 * wherever the stream is cut into chunks, and a client reads the same events,
 * comments and retry times, their ids the rewritten ones.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_ID_LINE_BYTES, rewriteEventIds } from "../../src/transport/event-ids";
import { clientView } from "../helpers/event-stream";

const encoder = new TextEncoder();

/** `text`'s bytes cut at `cuts`, through the rewrite of each id to `<id>`: the text that comes out. */
async function rewritten(text: string, cuts: number[] = []): Promise<string> {
  const bytes = encoder.encode(text);
  const points = [...new Set(cuts)]
    .filter((at) => at > 0 && at < bytes.length)
    .sort((a, b) => a - b);
  const chunks = [0, ...points].map((at, i) => bytes.subarray(at, points[i] ?? bytes.length));
  const input = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  const out = new Response(rewriteEventIds(input, async (id) => `<${id}>`));
  // As written: a BOM too, which `text()` would drop.
  return new TextDecoder("utf-8", { fatal: false, ignoreBOM: true }).decode(
    await out.arrayBuffer(),
  );
}

const LONG = `id: ${"x".repeat(MAX_ID_LINE_BYTES)}`;

/** A stream with each way an `id` field is written, or looks like one and is not, and what comes out. */
const STREAM = [
  "\uFEFFid: first\r\ndata: a\r\n\r\n",
  "id:tight\rdata: b\r\r",
  "idle: no\ndata: id: in data\n:id: a comment\nid\n\n",
  "id:\ndata: c\n\n",
  "id: nul\u0000\ndata: d\n\n",
  `${LONG}\ndata: e\n\n`,
  "id: é-ü\ndata: f\n\nid: cut",
].join("");
const EXPECTED = [
  "\uFEFFid: <first>\r\ndata: a\r\n\r\n",
  "id:<tight>\rdata: b\r\r",
  "idle: no\ndata: id: in data\n:id: a comment\nid\n\n",
  "id:\ndata: c\n\n",
  "id: nul\u0000\ndata: d\n\n",
  `${LONG}\ndata: e\n\n`,
  "id: <é-ü>\ndata: f\n\nid: cut",
].join("");

describe("rewriteEventIds", () => {
  it("rewrites each id's value, and no other byte, wherever the stream is cut", async () => {
    expect(await rewritten(STREAM)).toBe(EXPECTED);
    const length = encoder.encode(STREAM).length;
    for (let at = 1; at < length; at++) expect(await rewritten(STREAM, [at])).toBe(EXPECTED);
    const everyByte = Array.from({ length }, (_, at) => at);
    expect(await rewritten(STREAM, everyByte)).toBe(EXPECTED);
  });

  it("leaves a client the same events, comments and retry times, their ids rewritten", async () => {
    const line = fc.oneof(
      fc.stringMatching(/^[a-z0-9_-]{1,12}$/).map((id) => `id: ${id}`),
      fc.stringMatching(/^[a-z0-9_-]{1,12}$/).map((id) => `id:${id}`),
      fc.string({ maxLength: 20 }).map((data) => `data: ${data.replace(/[\r\n]/g, "")}`),
      fc.constantFrom("", ": comment", "retry: 100", "event: message", "id", "idx: 1"),
    );
    const stream = fc.tuple(
      fc.boolean(),
      fc.array(fc.tuple(line, fc.constantFrom("\n", "\r", "\r\n")), { maxLength: 20 }),
      fc.array(fc.nat(400), { maxLength: 6 }),
    );
    await fc.assert(
      fc.asyncProperty(stream, async ([bom, lines, cuts]) => {
        const text = `${bom ? "\uFEFF" : ""}${lines.map(([l, end]) => l + end).join("")}\n\n`;
        const expected = clientView(text).map((seen) =>
          "data" in seen && seen.id !== undefined && seen.id !== ""
            ? { ...seen, id: `<${seen.id}>` }
            : seen,
        );
        expect(clientView(await rewritten(text, cuts))).toEqual(expected);
      }),
    );
  });
});
