/**
 * What one `tools/list` page does to the tool map, decided without I/O: each
 * tool with the model-facing name `assignNames` gave it (names/assign.ts,
 * or the names kept from the last listing, isolate-memory.ts), and which
 * tools are new or changed since the isolate last saw them. Pure, so it is tested and
 * benchmarked on its own; tool-map.ts applies the plan to memory and KV.
 *
 * A schema is compared with the one the isolate remembers when it has it
 * (a structural comparison), and fingerprinted only when it does not:
 * fingerprinting every schema of a large listing costs more CPU than all the
 * rest of the plan.
 */
import type { Assignments, Displacement, KnownNames, Taken } from "../names/assign";
import type { RenameReason } from "../names/sanitize";
import { fingerprint32 } from "../names/stable-hash";
import type { ListedTool } from "../protocol/tools-list";
import type { Definition } from "./definition-pins";
import {
  holdsSchema,
  listsSchemaOf,
  SchemaHeld,
  type SchemaHolder,
  schemaOfListed,
} from "./listed-schema";

/** What the map holds of one original. */
export interface ToolEntry extends SchemaHolder {
  original: string;
  /** Fingerprint of `inputSchema`, to tell a changed tool from a known one without reading it. */
  schemaHash: string;
  /**
   * Known from KV only: which line of KV's schemas of `schemaHash` is its
   * schema's (schema-lines.ts `schemaCheck`), where the map says.
   */
  schemaCheck?: string;
  /**
   * `undefined` until read: a cold isolate learns originals first, schemas on
   * demand. Read from `listedSchema` when first asked for, where it holds one
   * (listed-schema.ts).
   */
  readonly inputSchema?: unknown;
  /** The length of `inputSchema` as JSON, where it is known. */
  schemaChars?: number;
  /**
   * What the entry holds, in characters of the tool's text (its name, schema
   * and what it was listed with): what isolate memory weighs it at
   * (`toolChars`). Its name's alone where unset.
   */
  chars?: number;
  /** What this isolate saw of the tool in a listing; `undefined` when it knows it from KV only. */
  listed?: {
    annotations: unknown;
    /** Its definition and pin, where `TOOL_CHANGES` pins definitions. */
    definition?: Definition;
  };
}

/**
 * What a tool's entry weighs in memory, in characters: its text as listed,
 * which holds its name, schema and what a listing keeps of it
 * (`ToolEntry.chars`), or its name alone. The map weighs its tools so
 * (isolate-memory.ts), and callers' views the entries they keep
 * (caller-listings.ts).
 */
export const toolChars = (entry: ToolEntry) => entry.chars ?? entry.original.length;

/** A value's length as JSON: a string's own, nothing for none. */
const jsonChars = (value: unknown): number =>
  typeof value === "string"
    ? value.length
    : value === undefined
      ? 0
      : (JSON.stringify(value)?.length ?? 0);

/**
 * What an entry for `tool` holds, in characters (`ToolEntry.chars`): the
 * tool's whole text where the listing's text writes it, its length known
 * without reading it; else its name, its schema's JSON (`schemaChars`, known
 * from its fingerprint) and what `listed` keeps.
 */
export function entryChars(
  original: string,
  tool: ListedTool | undefined,
  schemaChars: number,
  listed: NonNullable<ToolEntry["listed"]>,
): number {
  const span = tool?.written?.span;
  if (span) return span[1] - span[0];
  const { annotations, definition } = listed;
  const defined = definition
    ? jsonChars(definition.description) +
      jsonChars(definition.title) +
      jsonChars(definition.outputSchema)
    : 0;
  return original.length + schemaChars + jsonChars(annotations) + defined;
}

/** What the map already holds. */
export interface KnownTools extends KnownNames {
  entryOf(original: string): ToolEntry | undefined;
}

export interface PlannedEntry extends SchemaHolder {
  name: string;
  original: string;
  /** The tool as the page lists it. */
  tool: ListedTool | undefined;
  schemaHash: string;
  /** The length of `inputSchema` as JSON: read off the listing's text, or from the held copy. */
  schemaChars: number;
  /** New, or with a different `inputSchema` than the isolate knew. */
  changed: boolean;
  /**
   * The very schema the isolate holds, told by comparing the two (not by
   * fingerprint, which an origin can make collide): what the isolate pinned
   * for it still covers it.
   */
  sameSchema: boolean;
}

export interface ListingPlan {
  /** One per distinct original, in code-unit order. */
  entries: PlannedEntry[];
  /** Original → model-facing name. */
  names: Map<string, string>;
  /** The tools whose model-facing name differs from their own, and why: the `tools_renamed` log line. */
  renames: Array<{ from: string; to: string; reasons: RenameReason[] }>;
  /** Names that now stand for another tool than before (the operator chose them). */
  displaced: Displacement[];
  /** Tools not given their own name, as another tool has it. */
  taken: Taken[];
}

/** A tool of a plan, its schema held as `SchemaHeld` holds one. */
class PlannedTool extends SchemaHeld implements PlannedEntry {
  constructor(
    readonly name: string,
    readonly original: string,
    readonly tool: ListedTool | undefined,
    readonly schemaHash: string,
    readonly schemaChars: number,
    readonly changed: boolean,
    readonly sameSchema: boolean,
    schema: SchemaHolder,
  ) {
    super(schema);
  }
}

/** A tool as the map holds it (`ToolEntry`) from a listing, its schema held as the plan's. */
export class ListedEntry extends SchemaHeld implements ToolEntry {
  constructor(
    readonly original: string,
    readonly schemaHash: string,
    readonly schemaChars: number,
    readonly chars: number,
    readonly listed: NonNullable<ToolEntry["listed"]>,
    schema: SchemaHolder,
  ) {
    super(schema);
  }
}

/**
 * Tells a changed `inputSchema` from a known one; stored in KV, so it never
 * changes. `json`: where a text holds the schema as `JSON.stringify` writes it.
 * With the length of the schema's JSON, which it reads whole.
 */
export function schemaHash(
  inputSchema: unknown,
  json?: ListedTool["schemaJson"],
  known?: string,
): { hash: string; chars: number } {
  const text = json ? json.text : JSON.stringify(inputSchema ?? null);
  const [start, end] = json ? json.span : [0, text.length];
  return { hash: known ?? `2.${fingerprint32(text, start, end).toString(36)}`, chars: end - start };
}

/**
 * The length of a known schema's JSON, as held: the same schema's. Not read
 * off the listing's `schemaJson`, which finds out whether the text is written
 * as `JSON.stringify` would, by parsing it: a tool known by its text is not.
 */
const heldChars = (held: ToolEntry) => held.schemaChars ?? 0;

/**
 * `assigned`: what `assignNames` gives these tools' names. `asListed`: the
 * originals whose whole text is the one the isolate last read for them;
 * known with their schema, they are not read again. `proven`: the schema
 * fingerprint of each tool's pin where the listing pin proves the pin is
 * this very text's (listing-pin.ts `ProvenPins`): taken where the map's
 * entry has it too, not computed again.
 */
export function planListing(
  tools: readonly ListedTool[],
  known: KnownTools,
  assigned: Assignments,
  asListed: ReadonlySet<string> = new Set(),
  proven?: (original: string) => string | undefined,
): ListingPlan {
  const { assignments, displaced, taken } = assigned;
  const listed = new Map(tools.map((tool) => [tool.name, tool]));
  const entries = assignments.map(({ original, name }): PlannedEntry => {
    const entry = known.entryOf(original);
    const tool = listed.get(original);
    // Known with its schema, by this very text or the same schema: the copy already held, so
    // callers listed the same schema share one, not one each.
    if (
      entry !== undefined &&
      holdsSchema(entry) &&
      (asListed.has(original) || listsSchemaOf(entry, tool))
    ) {
      const chars = heldChars(entry);
      return new PlannedTool(name, original, tool, entry.schemaHash, chars, false, true, entry);
    }
    const schema = schemaOfListed(tool);
    const pinned = proven?.(original);
    const fromPin = pinned !== undefined && pinned === entry?.schemaHash ? pinned : undefined;
    const { hash, chars } = schemaHash(schema.inputSchema, tool?.schemaJson, fromPin);
    const changed = entry === undefined || holdsSchema(entry) || entry.schemaHash !== hash;
    return new PlannedTool(name, original, tool, hash, chars, changed, false, schema);
  });
  const names = new Map(assignments.map(({ original, name }) => [original, name]));
  const renames = assignments
    .filter(({ original, name }) => name !== original)
    .map(({ original, name, reasons }) => ({ from: original, to: name, reasons }));
  return { entries, names, renames, displaced, taken };
}

/** Renames a `tools_renamed` line names; the rest are counted. */
const RENAMES_NAMED = 10;

/**
 * A listing's new renames as one bounded log line's fields: how many, why
 * (counted per reason), and the first few by name, never one the operator's
 * rules hide (`hidden`: a log reader is not shown what a model is not).
 */
export function renamesLogged(
  renames: ListingPlan["renames"],
  hidden: (original: string) => boolean,
): {
  count: number;
  reasons: Record<string, number>;
  renames: ListingPlan["renames"];
  hidden: number;
} {
  const reasons: Record<string, number> = {};
  for (const rename of renames) {
    for (const reason of rename.reasons) reasons[reason] = (reasons[reason] ?? 0) + 1;
  }
  const shown = renames.filter(({ from }) => !hidden(from));
  return {
    count: renames.length,
    reasons,
    renames: shown.slice(0, RENAMES_NAMED),
    hidden: renames.length - shown.length,
  };
}
