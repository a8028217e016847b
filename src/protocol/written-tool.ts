/**
 * One tool of a `tools/list` answer read from its text (listing-text.ts):
 * where its name and the members the proxy reads are written, each parsed
 * from its own span when first read, and what the text of each member its
 * definition pin covers showed. A tool the next listing writes character for
 * character alike is this one moved (`movedTo`), not read again.
 */
import { parseExact } from "../json";
import { ownCopy, type Span, textAt } from "../json-spans";
import { isStringified, type Written, writesEachKeyOnce } from "../json-written";
import {
  type JsonKind,
  kindAt,
  type MemberReader,
  misshapenMembers,
  parsedMembers,
  rootTextReadsWell,
  type ToolMember,
} from "./tool-shape";
import type { ListedTool } from "./tools-list";

/** The value written at `span`; `undefined` when it is not JSON. */
export function parseSpan(text: string, [start, end]: Span): unknown {
  try {
    return JSON.parse(text.slice(start, end));
  } catch {
    return undefined;
  }
}

/**
 * A string's value, without a parse when it holds no escape; its own
 * characters, never a view into `text` (json-spans.ts `ownCopy`): a tool's
 * name outlives its listing as a key of the tool map, and kept as a slice,
 * every listing that brought a new name would stay in memory
 * (test/node/listing-memory.test.ts).
 */
export function stringAt(text: string, [start, end]: Span): string | undefined {
  if (text.charCodeAt(start) !== 0x22) return undefined;
  const inner = text.slice(start + 1, end - 1);
  if (inner.includes("\\")) return parseSpan(text, [start, end]) as string | undefined;
  return ownCopy(inner);
}

/** A tool's members that its definition pin covers. */
export type Pinned = "title" | "description" | "inputSchema" | "annotations" | "outputSchema";

export const isPinned = (key: string): key is Pinned =>
  key === "title" ||
  key === "description" ||
  key === "inputSchema" ||
  key === "annotations" ||
  key === "outputSchema";

/**
 * The members a tool's readers find by their span, in the order of their
 * places in `WrittenTool`'s spans: the name, those its pin covers, and the
 * others whose type a client checks (tool-shape.ts).
 */
export const SPANNED = [
  "name",
  "title",
  "description",
  "inputSchema",
  "annotations",
  "outputSchema",
  "icons",
  "_meta",
  "execution",
] as const;
export type Spanned = (typeof SPANNED)[number];

/** Where each member's start is in `WrittenTool`'s spans, its end after it: read for every tool. */
const SLOT = Object.fromEntries(SPANNED.map((key, index) => [key, 2 * index])) as Record<
  Spanned,
  number
>;

/** A member not parsed yet. */
const UNREAD: unique symbol = Symbol("unread");

/**
 * One tool of the listing as written: its name read at once, every other
 * member parsed the first time it is read, so a tool the tool map already
 * knows by its text is never parsed (`undefined` where a member is absent
 * or is not JSON).
 */
export class WrittenTool implements ListedTool, MemberReader {
  #title: unknown = UNREAD;
  #description: unknown = UNREAD;
  #annotations: unknown = UNREAD;
  #inputSchema: unknown = UNREAD;
  #outputSchema: unknown = UNREAD;
  /** `schemaJson`, once found out (`null`: not written as `JSON.stringify` writes it). */
  #schemaJson: ListedTool["schemaJson"] | null = undefined;

  constructor(
    readonly name: string,
    readonly written: { text: string; span: Span },
    /** Where each of `SPANNED` is written, start and end in turn (-1: absent). */
    private readonly spans: readonly number[],
    /** What the text of each member its definition pin covers showed: shared by the same text moved. */
    readonly texts: Readonly<Record<Pinned, Written>>,
  ) {}

  /** Where the member `key` is written in `written.text`; `undefined` when it is absent. */
  spanOf(key: Spanned): Span | undefined {
    const slot = SLOT[key];
    const start = this.spans[slot] as number;
    return start === -1 ? undefined : [start, this.spans[slot + 1] as number];
  }

  /** Whether the member `key` is written. */
  private has(key: Spanned): boolean {
    return this.spans[SLOT[key]] !== -1;
  }

  /**
   * One member, parsed. One that writes a number a double rounds
   * (`Written.rounded`) is read with its numbers' texts, from a copy of its
   * span (as `inputSchema` is): its pin digests them.
   */
  private read(key: Pinned): unknown {
    const span = this.spanOf(key);
    if (span === undefined) return undefined;
    if (this.texts[key].rounded) {
      const exact = parseExact(ownCopy(textAt({ text: this.written.text, span })));
      if (exact !== undefined) return exact.value;
    }
    return parseSpan(this.written.text, span);
  }

  get title(): unknown {
    if (this.#title === UNREAD) this.#title = this.read("title");
    return this.#title;
  }

  get description(): unknown {
    if (this.#description === UNREAD) this.#description = this.read("description");
    return this.#description;
  }

  get annotations(): unknown {
    if (this.#annotations === UNREAD) this.#annotations = this.read("annotations");
    return this.#annotations;
  }

  /**
   * Read with each number's text kept by its place (json.ts `parseExact`): a view writes an
   * `enum`'s 64-bit ids as strings, with the digits the origin wrote. Parsed from a copy of its
   * span, so that those texts keep no more of the listing alive than the schema's own. A schema
   * the scan found written as `JSON.stringify` writes its parse (the usual one) has no number a
   * double rounds: parsed as it is, without the copy and the exact parse's scans.
   */
  get inputSchema(): unknown {
    if (this.#inputSchema === UNREAD) {
      const span = this.spanOf("inputSchema");
      if (span === undefined || this.texts.inputSchema.stringified) {
        this.#inputSchema = this.read("inputSchema");
      } else {
        const text = ownCopy(textAt({ text: this.written.text, span }));
        // Nested past `MAX_NESTING`, it is not read exactly, but read as before.
        this.#inputSchema = parseExact(text)?.value ?? this.read("inputSchema");
      }
    }
    return this.#inputSchema;
  }

  get outputSchema(): unknown {
    if (this.#outputSchema === UNREAD) this.#outputSchema = this.read("outputSchema");
    return this.#outputSchema;
  }

  /** Members no pin covers, parsed each time they are read: only a misshapen tool's are (tool-shape.ts). */
  get icons(): unknown {
    return this.#unpinned("icons");
  }

  get _meta(): unknown {
    return this.#unpinned("_meta");
  }

  get execution(): unknown {
    return this.#unpinned("execution");
  }

  #unpinned(key: "icons" | "_meta" | "execution"): unknown {
    const span = this.spanOf(key);
    return span && parseSpan(this.written.text, span);
  }

  /** What the member's JSON is (tool-shape.ts), from the first character of its text. */
  memberKind(member: ToolMember): JsonKind | undefined {
    const start = this.spans[SLOT[member]] as number;
    return start === -1 ? undefined : kindAt(this.written.text, start);
  }

  memberValue(member: ToolMember): unknown {
    return this[member];
  }

  /** Whether a schema's root is one every client takes, told from its text (tool-shape.ts). */
  rootReadsWell(member: "inputSchema" | "outputSchema"): boolean | undefined {
    const start = this.spans[SLOT[member]] as number;
    return start === -1 ? undefined : rootTextReadsWell(this.written.text, start);
  }

  /**
   * This tool where `text` writes it again at `at`, character for character:
   * its spans moved there, its members unread. `undefined` where `text` writes
   * anything else there.
   */
  movedTo(text: string, at: number): WrittenTool | undefined {
    const { text: was, span } = this.written;
    const [start, end] = span;
    if (text.slice(at, at + end - start) !== was.slice(start, end)) return undefined;
    const shift = at - start;
    // A listing written again as it was has each tool where it was: its spans are the same.
    const spans =
      shift === 0 ? this.spans : this.spans.map((place) => (place === -1 ? -1 : place + shift));
    return new WrittenTool(this.name, { text, span: [at, end + shift] }, spans, this.texts);
  }

  /**
   * Whether `other` is written character for character as this tool: known
   * without reading them when one was found where the other moved to
   * (`movedTo` hands on what its text showed, and nothing else does).
   */
  sameTextAs(other: WrittenTool): boolean {
    return other.texts === this.texts || textAt(other.written) === textAt(this.written);
  }

  /**
   * The JSON of its description or annotations as listed, where the text
   * writes it as `JSON.stringify` writes its parse (`Written.stringified`):
   * what its pin digests and fingerprints, without writing it again;
   * `undefined` where it is absent or written otherwise.
   */
  stringifiedJson(key: "description" | "annotations"): string | undefined {
    const slot = SLOT[key];
    const start = this.spans[slot] as number;
    return start !== -1 && this.texts[key].stringified
      ? this.written.text.slice(start, this.spans[slot + 1])
      : undefined;
  }

  /**
   * Read for its fingerprint, and again for a view written in its place: found out once, and
   * kept (read some four times a listing, it would be a span made each time).
   */
  get schemaJson(): ListedTool["schemaJson"] {
    if (this.#schemaJson === undefined) {
      const { text } = this.written;
      const span = this.spanOf("inputSchema");
      if (span === undefined) return undefined;
      const written = this.texts.inputSchema;
      this.#schemaJson =
        written.stringified || isStringified(text, span, written, this.inputSchema)
          ? { text, span }
          : null;
    }
    return this.#schemaJson ?? undefined;
  }

  /**
   * Whether what its definition pin covers (its title, description, input
   * schema, annotations and output schema) is JSON, and writes no key twice:
   * copied as written, it then means to every reader what it means to the
   * proxy. A member `JSON.parse` does not read (a raw control character, or
   * `\x`, in a string) is pinned as absent, and read as written by a lenient
   * reader: a change written so was neither held nor logged. Parses those
   * whose text does not tell (`Written.stringified`).
   */
  get readsOneWay(): boolean {
    // What the text shows first: most listings need no parse to tell.
    return (
      this.#readsOneWay("title", () => this.title) &&
      this.#readsOneWay("description", () => this.description) &&
      (this.schemaJson !== undefined || this.#readsOneWay("inputSchema", () => this.inputSchema)) &&
      this.#readsOneWay("annotations", () => this.annotations) &&
      this.#readsOneWay("outputSchema", () => this.outputSchema)
    );
  }

  /** `readsOneWay` of one member, absent or as `read` parses it (`undefined`: not JSON). */
  #readsOneWay(key: Pinned, read: () => unknown): boolean {
    const written = this.texts[key];
    if (written.stringified || !this.has(key)) return true;
    const value = read();
    return value !== undefined && writesEachKeyOnce(written, value);
  }
}

/**
 * What tool-shape.ts finds misshapen of a tool read from a listing's text, by
 * what its text showed (`WrittenTool.texts`): a tool written again as it was
 * (`movedTo`) shares it, and is not read again; a listing named again in an
 * isolate reads only the tools whose text changed.
 */
const MISSHAPEN = new WeakMap<object, readonly string[]>();

/** The members of a listed tool no MCP client takes (tool-shape.ts `misshapenMembers`). */
export function misshapenOf(tool: ListedTool): readonly string[] {
  if (!(tool instanceof WrittenTool)) {
    return misshapenMembers(parsedMembers(tool as Record<ToolMember, unknown>));
  }
  let found = MISSHAPEN.get(tool.texts);
  if (found === undefined) {
    found = misshapenMembers(tool);
    MISSHAPEN.set(tool.texts, found);
  }
  return found;
}
