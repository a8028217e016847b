import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { eventStreamRewriter, rewriteEventStream } from "../../src/transport/event-rewrite";
import { watchEventStream } from "../../src/transport/event-watch";
import { transformUntil } from "../../src/transport/hand-off";
import { MAX_HELD_BYTES, ReadBudget } from "../../src/transport/read-bounded";
import { LINE_WEIGHT, mayMention } from "../../src/transport/sse";
import { clientView, isEvent } from "../helpers/event-stream";
import { captureLogs } from "../helpers/logs";

const encoder = new TextEncoder();

async function run(transform: TransformStream<Uint8Array, Uint8Array>, chunks: string[]) {
  const input = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
  return new Response(input.pipeThrough(transform)).text();
}

const upper = (data: string) => (data.startsWith("{") ? data.toUpperCase() : undefined);

/** A rewrite of every event that holds JSON; the others pass as they came. */
const rewriting = (rewrite: (data: string) => string | undefined, maxEventChars = 1 << 24) =>
  rewriteEventStream({ rewrite, mayMatter: (text) => text.includes("{"), maxEventChars });
const keeping = (maxEventChars = 1 << 24) => rewriting(() => undefined, maxEventChars);

describe("rewriteEventStream", () => {
  it("passes every event it does not rewrite as it came: ids, event types, comments, retry, line endings", async () => {
    const chunks = [
      ': keep-alive\n\nretry: 1500\n\nid: 7\nevent: message\ndata: {"a":1}\n\n',
      "id: p-0\ndata: \n\n",
      "id: 1\r\ndata: line one\r\ndata: line two\r\n\r\n",
      "id: 2\rdata: x\r\r",
      "data: y\n\n",
      "data: cut off at the end",
    ];
    expect(await run(keeping(), chunks)).toBe(chunks.join(""));
  });

  it("rewrites only what the rewrite returns, event by event, in every line ending", async () => {
    const out = await run(rewriting(upper), [
      'data: {"a":1}\n\ndata: plain\n\n',
      'id: 1\r\ndata: {"b":2}\r\n\r\n',
      'event: message\rdata: {"c":\rdata: 3}\r\r',
    ]);
    expect(out).toBe(
      'data: {"A":1}\n\ndata: plain\n\nid: 1\r\ndata: {"B":2}\r\n\r\nevent: message\rdata: {"C":\rdata: 3}\r\r',
    );
  });

  it("passes the rest of the stream unread once nothing more can need the rewrite", async () => {
    const seen: string[] = [];
    let done = false;
    const transform = rewriteEventStream({
      rewrite: (data) => {
        seen.push(data);
        done = true;
        return data.toUpperCase();
      },
      mayMatter: (text) => text.includes("{"),
      finished: () => done,
      maxEventChars: 1 << 24,
    });
    const out = await run(transform, ['data: {"a":1}\n\ndata: {"b":2}\n\n', 'data: {"c":3}\n\n']);
    expect(out).toBe('data: {"A":1}\n\ndata: {"b":2}\n\ndata: {"c":3}\n\n');
    expect(seen).toEqual(['{"a":1}']);
  });

  it("passes what it holds of an event, and the rest, as they came once finished between chunks", async () => {
    // A bound on what is read turns `finished` between chunks, inside an event.
    let done = false;
    const rewriter = eventStreamRewriter({
      rewrite: (data) => data.toUpperCase(),
      mayMatter: (text) => text.includes("{"),
      finished: () => done,
      maxEventChars: 1 << 24,
    });
    const decoder = new TextDecoder();
    let out = "";
    const emit = (bytes: Uint8Array) => {
      out += decoder.decode(bytes);
    };
    await rewriter.write(encoder.encode('data: {"a":1}\n\ndata: {"b"'), emit);
    done = true;
    await rewriter.write(encoder.encode(':2}\n\ndata: {"c":3}\n\n'), emit);
    await rewriter.end(emit);
    expect(out).toBe('data: {"A":1}\n\ndata: {"b":2}\n\ndata: {"c":3}\n\n');
  });

  it("handles an event split across chunks at every byte position", async () => {
    const stream = 'id: 42\nevent: message\ndata: {"jsonrpc":"2.0","id":1,"result":{"ü":"ß"}}\n\n';
    const bytes = encoder.encode(stream);
    const expected = await run(rewriting(upper), [stream]);
    for (let cut = 1; cut < bytes.length; cut++) {
      const input = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes.slice(0, cut));
          controller.enqueue(bytes.slice(cut));
          controller.close();
        },
      });
      const out = await new Response(input.pipeThrough(rewriting(upper))).text();
      expect(out, `cut at ${cut}`).toBe(expected);
    }
  });
});

describe("watchEventStream", () => {
  const MARKER = "notifications/tools/list_changed";

  it("passes bytes through unchanged and hands on an event whose marker is split across chunks", async () => {
    const seen: string[] = [];
    const chunks = ['data: {"method":"notifications/to', 'ols/list_changed"}\r\n\r\n', ": x\n"];
    const out = await run(
      watchEventStream(MARKER, (data) => seen.push(data), 1000),
      chunks,
    );
    expect(out).toBe(chunks.join(""));
    expect(seen).toEqual(['{"method":"notifications/tools/list_changed"}']);
  });

  it("hands on an event as soon as a lone CR ends it, not with the origin's next bytes", async () => {
    const seen: string[] = [];
    const watch = watchEventStream(MARKER, (data) => seen.push(data), 1000);
    const writer = watch.writable.getWriter();
    const reader = watch.readable.getReader();
    const send = (text: string) => Promise.all([writer.write(encoder.encode(text)), reader.read()]);
    // CR line ends, the stream kept open: nothing follows until the next change.
    await send(`data: {"method":"${MARKER}"}\r\r`);
    expect(seen).toEqual([`{"method":"${MARKER}"}`]);
    // A CRLF cut after its CR is one line end, not two: one event, its two lines.
    await send("data: a\r");
    await send(`\ndata: "${MARKER}"\r\n\r\n`);
    expect(seen).toEqual([`{"method":"${MARKER}"}`, `a\n"${MARKER}"`]);
  });

  it("hands on an event that spells the marker with escapes, as JSON reads it", async () => {
    const seen: string[] = [];
    const escaped = [
      'data: {"method":"notifications\\/tools\\/list_changed"}\n\n',
      'data: {"method":"notifications/\\u0074ools/list_changed"}\n\n',
    ];
    await run(
      watchEventStream(MARKER, (data) => seen.push(data), 1000),
      escaped,
    );
    expect(seen.map((data) => JSON.parse(data).method)).toEqual([MARKER, MARKER]);
  });

  it("hands on only events that mention the marker, and skips past one too long to look at", async () => {
    const seen: string[] = [];
    const chunks = [
      'data: {"a":1}\n\n',
      `data: ${"x".repeat(1200)}`,
      `"${MARKER}"\n\n`,
      `data: {"method":"${MARKER}"}\n\n`,
    ];
    const out = await run(
      watchEventStream(MARKER, (data) => seen.push(data), 1000),
      chunks,
    );
    expect(out).toBe(chunks.join(""));
    expect(seen).toEqual([`{"method":"${MARKER}"}`]);
  });
});

describe("watchEventStream, comment lines without a blank line", () => {
  it("hands on the event after them, however many: the parser keeps none of them", async () => {
    // A keep-alive as the SSE spec suggests it, a comment line every 15 s or so: hours of them.
    const seen: string[] = [];
    const watch = watchEventStream('"tools"', (data) => seen.push(data), 64 * 1024);
    const pings = Array.from({ length: 2_000 }, () => ":\n");
    await run(watch, [...pings, 'data: {"tools":1}\n\n']);
    expect(seen).toEqual(['{"tools":1}']);
  });
});

describe("watchEventStream, an event too long to look at", () => {
  it("is skipped to its blank line, in CRLF too: none of its lines are taken for an event", async () => {
    const seen: string[] = [];
    const marker = "notifications/tools/list_changed";
    const chunks = [
      `data: ${"x".repeat(1200)}`,
      `\r\ndata: {"method":"${marker}"}\r\n\r\n`,
      `data: {"method":"${marker}","params":{}}\r\n\r\n`,
    ];
    await run(
      watchEventStream(marker, (data) => seen.push(data), 1000),
      chunks,
    );
    expect(seen).toEqual([`{"method":"${marker}","params":{}}`]);
  });

  it("ends at its own blank line wherever a chunk cuts it: the event after it is handed on", async () => {
    // A long log message on the GET stream, then the origin's list_changed: a chunk that ends
    // after the long event's last line end leaves its blank line to begin the next chunk.
    const marker = "notifications/tools/list_changed";
    for (const eol of ["\n", "\r\n", "\r"]) {
      const stream = `data: ${"x".repeat(1200)}${eol}${eol}data: {"method":"${marker}"}${eol}${eol}`;
      const bytes = encoder.encode(stream);
      for (let cut = 1000; cut < bytes.length; cut++) {
        const seen: string[] = [];
        const input = chunked(bytes, [cut]);
        await new Response(
          input.pipeThrough(watchEventStream(marker, (data) => seen.push(data), 1000)),
        ).arrayBuffer();
        expect(seen, `${JSON.stringify(eol)}, cut at ${cut}`).toEqual([`{"method":"${marker}"}`]);
      }
    }
  });
});

describe("an event that never ends", () => {
  it("ends a rewritten stream with an error instead of growing without bound", async () => {
    const logs = captureLogs();
    const endless = ["data: ", "x".repeat(600), "y".repeat(600)];
    await expect(run(keeping(1000), endless)).rejects.toThrow("exceeds 1000 characters");
    expect(logs.events("event_too_large")).toEqual([{ event: "event_too_large", limit: 1000 }]);
    logs.restore();
  });
});

describe("an event held against the isolate's budget", () => {
  const spanning = (event: string) => [event.slice(0, 500), event.slice(500)];
  const events = ["data: ", "data: "].map((head) => `${head}${"x".repeat(1000)}\n\n`);

  it("holds only the event being read: the budget is taken by each event in turn and given back", async () => {
    // Room for one event's first half, not two.
    const reads = new ReadBudget(900, 0);
    const hold = reads.hold();
    const transform = rewriteEventStream({
      rewrite: () => undefined,
      mayMatter: () => false,
      maxEventChars: 1 << 24,
      hold,
    });
    const chunks = events.flatMap(spanning);
    expect(await run(transform, chunks)).toBe(events.join(""));
    expect(reads.held).toBe(0);
  });

  it("ends the stream with an error when the event cannot be held, and gives back what it took", async () => {
    const logs = captureLogs();
    const reads = new ReadBudget(1500, 0);
    const other = reads.hold();
    other.take(1200);
    const transform = rewriteEventStream({
      rewrite: () => undefined,
      mayMatter: () => false,
      maxEventChars: 1 << 24,
      hold: reads.hold(),
    });
    await expect(run(transform, spanning(events[0] as string))).rejects.toThrow(
      "isolate's reads hold too much",
    );
    expect(logs.events("reads_over_budget")).toEqual([
      { event: "reads_over_budget", what: "an event of the stream", limit: MAX_HELD_BYTES },
    ]);
    other.release();
    expect(reads.held).toBe(0);
    logs.restore();
  });
});

describe("rewriteEventStream, events across chunks", () => {
  it("keeps an event held from an earlier chunk when a later event of the same chunk is rewritten", async () => {
    const out = await run(rewriting(upper), ["data: pla", 'in\n\ndata: {"a":1}\n\n']);
    expect(out).toBe('data: plain\n\ndata: {"A":1}\n\n');
  });

  it("finds what may matter when it is split across three chunks or more", async () => {
    const tools = (text: string) => text.includes('"tools"');
    const transform = rewriteEventStream({
      rewrite: (data) => (tools(data) ? data.toUpperCase() : undefined),
      mayMatter: tools,
      maxEventChars: 1 << 24,
    });
    const out = await run(transform, ['data: {"', "t", "o", 'ols":[]}\n\n']);
    expect(out).toBe('data: {"TOOLS":[]}\n\n');
  });

  it("rewrites or keeps every event whatever the chunking (every cut of a mixed stream)", async () => {
    const stream =
      ': hi\n\ndata: plain\r\n\r\nid: 3\rdata: {"x":"ü"}\r\rdata: other\n\ndata: {"y":2}\n\n';
    const expected =
      'data: plain\r\n\r\nid: 3\rdata: {"X":"Ü"}\r\rdata: other\n\ndata: {"Y":2}\n\n';
    const bytes = encoder.encode(stream);
    for (let a = 1; a < bytes.length; a += 3) {
      for (let b = a + 1; b < bytes.length; b += 5) {
        const input = new ReadableStream<Uint8Array>({
          start(controller) {
            for (const part of [bytes.slice(0, a), bytes.slice(a, b), bytes.slice(b)])
              controller.enqueue(part);
            controller.close();
          },
        });
        const out = await new Response(input.pipeThrough(rewriting(upper))).text();
        expect(out, `cut at ${a}, ${b}`).toBe(`: hi\n\n${expected}`);
      }
    }
  });
});

describe("a rewritten event: its data lines written anew, every other line as it came", () => {
  it("keeps comments, id, event, retry and unknown fields byte for byte and in place, in any order", async () => {
    const event =
      ':  odd   spacing \r\nretry:2500\r\nid:  7\r\n:x\r\nevent:message\r\nx-field: y\r\ndata:{"a":1}\r\n\r\n';
    expect(await run(rewriting(upper), [event])).toBe(event.replace('"a"', '"A"'));
  });

  it("keeps a byte that is no UTF-8 in a line it does not change", async () => {
    // Decoded and encoded again, each would be U+FFFD's three bytes.
    const withData = (data: string) =>
      new Uint8Array([
        ...encoder.encode(": caf"),
        0xe9,
        ...encoder.encode("\nid: "),
        0xff,
        ...encoder.encode(`\ndata: ${data}\n\n`),
      ]);
    const input = new Response(withData('{"a":1}')).body as ReadableStream<Uint8Array>;
    const out = await new Response(input.pipeThrough(rewriting(upper))).arrayBuffer();
    expect(new Uint8Array(out)).toEqual(withData('{"A":1}'));
  });

  it("writes each data line as the origin spelled its field: `data`, `data:`, `data: `", async () => {
    const rewrite = (data: string) => data.replace("{", "{ ").replace("a", "b");
    const out = await run(rewriting(rewrite), ['data\ndata:{"a":\ndata: 1}\ndata:  2\n\n']);
    // A value that begins with a space takes one more after the colon, or a reader takes it off.
    expect(out).toBe('data\ndata:{ "b":\ndata: 1}\ndata:  2\n\n');
    expect(clientView(out)).toEqual([{ data: '\n{ "b":\n1}\n 2' }]);
    expect(
      await run(
        rewriting(() => " {}"),
        ["data:{}\n\n"],
      ),
    ).toBe("data:  {}\n\n");
  });

  it("puts the data's lines in the origin's data lines' places: more in the last one, fewer leave comments", async () => {
    const event =
      'id: 1\r\ndata: {"a":\r\n: between\r\ndata: 1,\r\nevent: e\r\ndata: "b":2}\r\n\r\n';
    const lines = (data: string) => data.replaceAll(",", ",\n");
    expect(await run(rewriting(lines), [event])).toBe(
      'id: 1\r\ndata: {"a":\r\n: between\r\ndata: 1,\r\nevent: e\r\ndata: \r\ndata: "b":2}\r\n\r\n',
    );
    const joined = (data: string) => (data.includes("{") ? data.replaceAll("\n", "") : undefined);
    // A place left over is an empty comment: a line left out would join a CR before it to an LF after.
    expect(await run(rewriting(joined), [event])).toBe(
      'id: 1\r\ndata: {"a":1,"b":2}\r\n: between\r\n:\r\nevent: e\r\n:\r\n\r\n',
    );
    expect(await run(rewriting(joined), ["id: 1\rdata: {\ndata: }\n\n"])).toBe(
      "id: 1\rdata: {}\n:\n\n",
    );
    for (const rewrite of [lines, joined]) {
      const [seen] = clientView(await run(rewriting(rewrite), [event])).filter(isEvent);
      expect(seen).toEqual({ id: "1", event: "e", data: rewrite('{"a":\n1,\n"b":2}') });
    }
  });

  it("keeps an event the stream ends in as unended as it came: its last line without a line end", async () => {
    expect(await run(rewriting(upper), [': a\nid: 1\ndata: {"a":1}'])).toBe(
      ': a\nid: 1\ndata: {"A":1}',
    );
    expect(await run(rewriting(upper), ['data: {"a":1}\r\n: cut of'])).toBe(
      'data: {"A":1}\r\n: cut of',
    );
    expect(
      await run(
        rewriting((data) => `${upper(data)}\n!`),
        ['data: {"a":1}'],
      ),
    ).toBe('data: {"A":1}\ndata: !');
  });

  it("keeps a BOM the stream starts with, before the event it rewrites", async () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...encoder.encode('data: {"a":1}\n\n')]);
    const input = new Response(bytes).body as ReadableStream<Uint8Array>;
    const out = new Uint8Array(
      await new Response(input.pipeThrough(rewriting(upper))).arrayBuffer(),
    );
    expect(out).toEqual(new Uint8Array([0xef, 0xbb, 0xbf, ...encoder.encode('data: {"A":1}\n\n')]));
  });

  it("reads `ï»¿data:` as a client reads it past the stream's start: a field no reader knows", async () => {
    // eventsource-parser drops the three characters where its input begins, a BOM decoded as
    // Latin-1: read so, a later event's unknown field was written anew as data a client reads.
    const stream = 'data: {"a":1}\n\nï»¿data: {"b":2}\ndata: {"c":3}\n\n';
    expect(await run(rewriting(upper), [stream])).toBe(
      'data: {"A":1}\n\nï»¿data: {"b":2}\ndata: {"C":3}\n\n',
    );
  });
});

describe("a rewritten event whose last CRLF a chunk cuts", () => {
  it("is written as when no chunk cuts it: the LF that begins the next chunk is the origin's, after its CR", async () => {
    // Once written anew as `\n\n` with the origin's LF after it, the client read one blank line more.
    const stream = 'id: 3\r\ndata: {"x":"ü"}\r\n\r\ndata: other\r\n\r\ndata: {"y":2}\r\n\r\n';
    const whole = await run(rewriting(upper), [stream]);
    expect(whole).toBe('id: 3\r\ndata: {"X":"Ü"}\r\n\r\ndata: other\r\n\r\ndata: {"Y":2}\r\n\r\n');
    const bytes = encoder.encode(stream);
    for (const match of stream.matchAll(/\r\n\r\n/g)) {
      // Between an event's last CR and its LF; the LF alone in a chunk too.
      const cut = encoder.encode(stream.slice(0, (match.index ?? 0) + 3)).length;
      for (const cuts of [[cut], [cut, cut + 1]]) {
        const out = await new Response(chunked(bytes, cuts).pipeThrough(rewriting(upper))).text();
        expect(out, `cut at ${cuts}`).toBe(whole);
      }
    }
  });
});

/** `bytes` cut at the given places, each chunk a copy (as a runtime reads them). */
function chunked(bytes: Uint8Array, cuts: number[]): ReadableStream<Uint8Array> {
  const ends = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  return new ReadableStream({
    start(controller) {
      let at = 0;
      for (const end of [...ends, bytes.length]) {
        if (end > at) controller.enqueue(bytes.slice(at, end));
        at = Math.max(at, end);
      }
      controller.close();
    },
  });
}

describe("a BOM in an event stream", () => {
  const marked = (data: string) => (data.includes('"tools"') ? `${data}!` : undefined);
  const marking = () =>
    rewriteEventStream({
      rewrite: marked,
      mayMatter: (text) => text.includes('"tools"'),
      maxEventChars: 1 << 24,
    });

  it("keeps a U+FEFF that begins a chunk inside a rewritten event: it is a character of the data", async () => {
    const out = await run(marking(), ['data: {"tools":"a', '\uFEFFb"}\n\n']);
    expect(out).toBe('data: {"tools":"a\uFEFFb"}!\n\n');
  });

  it("reads one only where the stream starts: an event after it beginning with one is no event", async () => {
    const input = 'data: {"tools":1}\n\n\uFEFFdata: {"tools":2}\n\n';
    expect(await run(marking(), [`\uFEFF${input}`])).toBe(
      'data: {"tools":1}!\n\n\uFEFFdata: {"tools":2}\n\n',
    );
  });
});

describe("rewriteEventStream, any stream in any chunks (property)", () => {
  const ending = fc.constantFrom("\n", "\r", "\r\n");
  // Characters that matter to the reader: separators, multi-byte UTF-8, the marker's, escapes.
  const text = fc
    .array(fc.constantFrom("a", " ", ":", "{", "}", '"', "ü", "€", "😀", '"tools"', "\\u", "x"), {
      maxLength: 12,
    })
    .map((parts) => parts.join(""));
  const line = fc.oneof(
    text.map((value) => `data: ${value}`),
    text.map((value) => `data:${value}`),
    fc.constant("data"),
    text.map((value) => `id: ${value}`),
    fc.constantFrom("event: message", "event:", "retry: 1500", "retry: soon", "other: x"),
    text.map((value) => `:${value}`),
    // A BOM is read as one only where the stream starts: anywhere else it makes the field unknown.
    text.map((value) => `\uFEFFdata: ${value}`),
  );
  const event = fc
    .tuple(fc.array(fc.tuple(line, ending), { minLength: 1, maxLength: 5 }), ending)
    .map(([lines, end]) => lines.map(([content, eol]) => content + eol).join("") + end);
  const stream = fc
    .tuple(fc.array(event, { maxLength: 6 }), fc.option(line, { nil: "" }))
    .map(([events, unfinished]) => events.join("") + unfinished);
  const cuts = fc.array(fc.nat(), { maxLength: 8 });
  /** `input` as a client's decoder reads it: without the BOM the stream may start with. */
  const asRead = (input: string) => new TextDecoder().decode(encoder.encode(input));
  /**
   * A stream as a client's decoder reads it, decoded whole: workerd's `Response.text()`
   * keeps a BOM whose bytes came in two chunks.
   */
  const readText = async (stream: ReadableStream<Uint8Array>) =>
    new TextDecoder().decode(await new Response(stream).arrayBuffer());

  it("passes every byte as it came when the rewrite keeps every event", async () => {
    await fc.assert(
      fc.asyncProperty(stream, cuts, async (input, at) => {
        const bytes = encoder.encode(input);
        const out = await new Response(chunked(bytes, at).pipeThrough(keeping())).arrayBuffer();
        expect(new Uint8Array(out)).toEqual(bytes);
      }),
      { numRuns: 1000 },
    );
  });

  it("shows a client the same stream with the events that mention the marker rewritten", async () => {
    const marked = (data: string) => (data.includes('"tools"') ? data.toUpperCase() : undefined);
    const transform = () =>
      rewriteEventStream({
        rewrite: marked,
        mayMatter: (value) => value.includes('"tools"'),
        maxEventChars: 1 << 24,
      });
    await fc.assert(
      fc.asyncProperty(stream, cuts, async (input, at) => {
        const bytes = encoder.encode(input);
        const out = await readText(chunked(bytes, at).pipeThrough(transform()));
        const expected = clientView(asRead(input)).map((item) =>
          isEvent(item) ? { ...item, data: marked(item.data) ?? item.data } : item,
        );
        expect(clientView(out)).toEqual(expected);
      }),
      { numRuns: 1000 },
    );
  });

  it("keeps every line but the data lines of the events it rewrites as it came, in order", async () => {
    /** `text`'s lines, each with its line end (none for a last line cut off). */
    const linesOf = (text: string) => text.match(/[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$/g) ?? [];
    const isData = (line: string) => /^data(?:[:\r\n]|$)/.test(line);
    /** A line without its text: a data line's field as spelled, a comment's colon, and its line end. */
    const shape = (line: string) => line.replace(/^(data(?:: ?)?|:)[^\r\n]*/, "$1");
    // A rewrite that keeps the data's lines (a rename), and ones that make more of them and fewer.
    const rewrites = {
      same: (data: string) => data.toUpperCase(),
      more: (data: string) => data.replaceAll(":", ":\n"),
      fewer: (data: string) => data.replaceAll("\n", ""),
    };
    /** What a client reads, but empty comments, which a place the data has no line for becomes. */
    const read = (text: string) =>
      clientView(text).filter((item) => !("comment" in item && item.comment === ""));
    await fc.assert(
      fc.asyncProperty(
        stream,
        cuts,
        fc.constantFrom(...Object.keys(rewrites)),
        async (input, at, kind) => {
          const rewrite = rewrites[kind as keyof typeof rewrites];
          const marked = (data: string) => (data.includes('"tools"') ? rewrite(data) : undefined);
          const transform = rewriteEventStream({
            rewrite: marked,
            mayMatter: (value) => value.includes('"tools"'),
            maxEventChars: 1 << 24,
          });
          const out = await readText(chunked(encoder.encode(input), at).pipeThrough(transform));
          const sent = asRead(input);
          const [outLines, sentLines] = [linesOf(out), linesOf(sent)];
          if (kind === "more") {
            const others = (lines: string[]) => lines.filter((line) => !isData(line));
            expect(others(outLines)).toEqual(others(sentLines));
          } else {
            // Line for line: every line but a data line as it came. A data line's place holds one
            // ended alike: spelled as it was where its value stays (a rename), or, where the data
            // has fewer lines, one spelled for the value it takes, or an empty comment.
            expect(outLines.length).toBe(sentLines.length);
            const lineEnd = (line: string) => /[\r\n]*$/.exec(line)?.[0];
            sentLines.forEach((line, i) => {
              const written = outLines[i] as string;
              if (!isData(line)) expect(written).toBe(line);
              else if (kind === "same") expect(shape(written)).toBe(shape(line));
              else {
                expect(isData(written) || shape(written) === shape(`:${lineEnd(line)}`)).toBe(true);
                expect(lineEnd(written)).toBe(lineEnd(line));
              }
            });
          }
          const expected = clientView(sent).map((item) =>
            isEvent(item) ? { ...item, data: marked(item.data) ?? item.data } : item,
          );
          expect(read(out)).toEqual(
            expected.filter((item) => !("comment" in item && item.comment === "")),
          );
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("watches: hands on the data of every event that may mention the marker, bytes as they came", async () => {
    await fc.assert(
      fc.asyncProperty(stream, cuts, async (input, at) => {
        const seen: string[] = [];
        const bytes = encoder.encode(input);
        const watch = watchEventStream('"tools"', (data) => seen.push(data), 1 << 24);
        const out = await new Response(chunked(bytes, at).pipeThrough(watch)).arrayBuffer();
        expect(new Uint8Array(out)).toEqual(bytes);
        const expected = clientView(asRead(input))
          .filter(isEvent)
          .map(({ data }) => data)
          .filter((data) => mayMention(data, ['"tools"']));
        expect(seen).toEqual(expected);
      }),
      { numRuns: 1000 },
    );
  });

  it("watches: skips an event too long to look at, and none of its lines are taken for events", async () => {
    const long = fc
      .tuple(fc.array(fc.tuple(text, ending), { minLength: 1, maxLength: 4 }), ending)
      .map(
        ([lines, end]) =>
          lines.map(([value, eol]) => `data: ${"x".repeat(40)}${value}${eol}`).join("") + end,
      );
    const streamWithLong = fc
      .array(fc.oneof(event, long), { maxLength: 6 })
      .map((events) => `${events.join("")}\n`);
    await fc.assert(
      fc.asyncProperty(streamWithLong, cuts, async (input, at) => {
        const seen: string[] = [];
        const watch = watchEventStream('"tools"', (data) => seen.push(data), 32);
        await new Response(chunked(encoder.encode(input), at).pipeThrough(watch)).arrayBuffer();
        const events = clientView(asRead(input))
          .filter(isEvent)
          .map(({ data }) => data);
        for (const data of seen) expect(events).toContain(data);
      }),
      { numRuns: 1000 },
    );
  });

  it("watches: may skip an event of too many lines to look at, and hands on every other", async () => {
    // Each line costs the parser an object or two, however short: it counts LINE_WEIGHT.
    const maxEventChars = 16 * LINE_WEIGHT;
    const many = fc
      .tuple(fc.array(ending, { minLength: 20, maxLength: 30 }), ending)
      .map(([eols, end]) => eols.map((eol) => `data: LONG "tools"${eol}`).join("") + end);
    const streamWithMany = fc
      .array(fc.oneof(event, many), { maxLength: 6 })
      .map((events) => `${events.join("")}\n`);
    await fc.assert(
      fc.asyncProperty(streamWithMany, cuts, async (input, at) => {
        const seen: string[] = [];
        const bytes = encoder.encode(input);
        const watch = watchEventStream('"tools"', (data) => seen.push(data), maxEventChars);
        const out = await new Response(chunked(bytes, at).pipeThrough(watch)).arrayBuffer();
        expect(new Uint8Array(out)).toEqual(bytes);
        const events = clientView(asRead(input))
          .filter(isEvent)
          .map(({ data }) => data)
          .filter((data) => mayMention(data, ['"tools"']));
        // One of many lines that came whole in one chunk is read, its lines let go at its end.
        const isLong = (data: string) => data.includes("LONG");
        expect(seen.filter((data) => !isLong(data))).toEqual(
          events.filter((data) => !isLong(data)),
        );
        for (const data of seen) expect(events).toContain(data);
      }),
      { numRuns: 1000 },
    );
  });

  it("rewrites the first event that mentions the marker, then hands the rest on as it came", async () => {
    await fc.assert(
      fc.asyncProperty(stream, cuts, async (input, at) => {
        let rewrote = false;
        const rewriter = eventStreamRewriter({
          rewrite: (data) => {
            if (!data.includes('"tools"')) return undefined;
            rewrote = true;
            return data.toUpperCase();
          },
          mayMatter: (value) => value.includes('"tools"'),
          finished: () => rewrote,
          maxEventChars: 1 << 24,
        });
        const bytes = encoder.encode(input);
        const out = await readText(transformUntil(chunked(bytes, at), rewriter, () => rewrote));
        let first = true;
        const expected = clientView(asRead(input)).map((item) => {
          if (!isEvent(item) || !first || !item.data.includes('"tools"')) return item;
          first = false;
          return { ...item, data: item.data.toUpperCase() };
        });
        expect(clientView(out)).toEqual(expected);
      }),
      { numRuns: 1000 },
    );
  });

  it("keeps the first event that mentions the marker as it came, then hands the rest on: every byte", async () => {
    // A listing the rewrite reads and answers but need not change (its names legal already).
    await fc.assert(
      fc.asyncProperty(stream, cuts, async (input, at) => {
        let answered = false;
        const rewriter = eventStreamRewriter({
          rewrite: (data) => {
            if (data.includes('"tools"')) answered = true;
            return undefined;
          },
          mayMatter: (value) => value.includes('"tools"'),
          finished: () => answered,
          maxEventChars: 1 << 24,
        });
        const bytes = encoder.encode(input);
        const out = await new Response(
          transformUntil(chunked(bytes, at), rewriter, () => answered),
        ).arrayBuffer();
        expect(new Uint8Array(out)).toEqual(bytes);
      }),
      { numRuns: 1000 },
    );
  });
});
