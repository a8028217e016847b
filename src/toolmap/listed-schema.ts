/**
 * A tool's input schema held as the JSON text it was listed in, and parsed
 * the first time it is read. A listing read from its text names its tools,
 * fingerprints their schemas and pins their definitions from that text
 * (protocol/listing-text.ts), and in search mode shows no schema; what reads
 * a schema is a view, a call or a search, and most of a large listing's
 * tools meet none in an isolate's life. Parsing every schema was a fifth of
 * a first listing's CPU (docs/performance.md).
 *
 * Held so only where the text is known, without a parse, to be written as
 * `JSON.stringify` writes its parse (`ListedTool.schemaJson`, json-written.ts
 * `Written.stringified`): it reads one way, and its parse cannot fail. The
 * text is the entry's own copy, never a slice of the listing's, which would
 * keep the whole listing alive as long as the map keeps the tool.
 */
import { sameJson } from "../json";
import { ownCopy, textAt } from "../json-spans";
import type { ListedTool } from "../protocol/tools-list";

export class ListedSchema {
  #text: string | undefined;
  #value: unknown;

  constructor(text: string) {
    this.#text = text;
  }

  /** The schema: parsed once, then held parsed, and the text let go. */
  get value(): unknown {
    if (this.#text !== undefined) {
      this.#value = JSON.parse(this.#text);
      this.#text = undefined;
    }
    return this.#value;
  }

  /** Its JSON as listed, while it was never read. */
  get unread(): string | undefined {
    return this.#text;
  }
}

/** What holds a schema: its value, or the text it is read from when asked (`listedSchema`). */
export interface SchemaHolder {
  readonly inputSchema?: unknown;
  readonly listedSchema?: ListedSchema;
}

/**
 * `tool`'s schema as an entry holds it: its text where the listing writes it
 * as `JSON.stringify` would and it was not parsed, else its value.
 */
export function schemaOfListed(tool: ListedTool | undefined): SchemaHolder {
  const json = tool?.schemaJson;
  // Its own characters: the listing's text is not kept.
  return json
    ? { listedSchema: new ListedSchema(ownCopy(textAt(json))) }
    : { inputSchema: tool?.inputSchema };
}

/**
 * What holds a schema in the map, a listing's plan or a search: read from
 * `listedSchema` when first asked for, where there is one, else its value.
 * The entries are of classes that extend it, their `inputSchema` a getter of
 * the prototype: made an own getter, each object was a slow one, and cost
 * about what the parse saved. A spread of one leaves the schema out.
 */
export class SchemaHeld implements SchemaHolder {
  readonly listedSchema: ListedSchema | undefined;
  readonly #value: unknown;

  constructor(from: SchemaHolder) {
    this.listedSchema = from.listedSchema;
    // Read only where there is no text to read it from.
    this.#value = from.listedSchema === undefined ? from.inputSchema : undefined;
  }

  get inputSchema(): unknown {
    return this.listedSchema === undefined ? this.#value : this.listedSchema.value;
  }
}

/** Whether `entry` holds its schema, as a value or as text: not one known from KV only. */
export const holdsSchema = (entry: SchemaHolder): boolean =>
  entry.listedSchema !== undefined || entry.inputSchema !== undefined;

/**
 * Whether `tool` lists the schema `entry` holds: the same text while the held
 * one was never read (each is how `JSON.stringify` writes its parse), else
 * the same value (`sameJson`, which reads both) written in the same order. A
 * pin digests a schema as `JSON.stringify` writes it, so a new isolate takes
 * one written in another key order for a change: the isolate that holds it
 * must too, or it keeps the pin and shows what a new one holds.
 */
export function listsSchemaOf(entry: SchemaHolder, tool: ListedTool | undefined): boolean {
  const held = entry.listedSchema?.unread;
  const json = tool?.schemaJson;
  if (held !== undefined && json !== undefined) {
    const [start, end] = json.span;
    return held.length === end - start && json.text.startsWith(held, start);
  }
  const [a, b] = [entry.inputSchema, tool?.inputSchema];
  return sameJson(a, b) && JSON.stringify(a) === JSON.stringify(b);
}
