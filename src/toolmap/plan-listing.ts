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
import { sameJson } from "../json";
import type { Assignments, Displacement, KnownNames, Taken } from "../names/assign";
import type { RenameReason } from "../names/sanitize";
import { fingerprint32 } from "../names/stable-hash";
import type { ListedTool } from "../protocol/tools-list";
import type { Definition } from "./definition-pins";

/** What the map holds of one original. */
export interface ToolEntry {
  original: string;
  /** Fingerprint of `inputSchema`, to tell a changed tool from a known one without reading it. */
  schemaHash: string;
  /** `undefined` until read: a cold isolate learns originals first, schemas on demand. */
  inputSchema?: unknown;
  /** What this isolate saw of the tool in a listing; `undefined` when it knows it from KV only. */
  listed?: {
    annotations: unknown;
    /** Its definition and pin, where `TOOL_CHANGES` pins definitions. */
    definition?: Definition;
  };
}

/** What the map already holds. */
export interface KnownTools extends KnownNames {
  entryOf(original: string): ToolEntry | undefined;
}

export interface PlannedEntry {
  name: string;
  original: string;
  /** The tool as the page lists it. */
  tool: ListedTool | undefined;
  inputSchema: unknown;
  schemaHash: string;
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

/**
 * Tells a changed `inputSchema` from a known one; stored in KV, so it never
 * changes. `json`: where a text holds the schema as `JSON.stringify` writes it.
 */
export function schemaHash(inputSchema: unknown, json?: ListedTool["schemaJson"]): string {
  const fingerprint = json
    ? fingerprint32(json.text, ...json.span)
    : fingerprint32(JSON.stringify(inputSchema ?? null));
  return `2.${fingerprint.toString(36)}`;
}

/**
 * `assigned`: what `assignNames` gives these tools' names. `asListed`: the
 * originals whose whole text is the one the isolate last read for them;
 * known with their schema, they are not read again.
 */
export function planListing(
  tools: readonly ListedTool[],
  known: KnownTools,
  assigned: Assignments,
  asListed: ReadonlySet<string> = new Set(),
): ListingPlan {
  const { assignments, displaced, taken } = assigned;
  const listed = new Map(tools.map((tool) => [tool.name, tool]));
  const entries = assignments.map(({ original, name }): PlannedEntry => {
    const entry = known.entryOf(original);
    const tool = listed.get(original);
    if (entry?.inputSchema !== undefined && asListed.has(original)) {
      const { inputSchema, schemaHash } = entry;
      return { name, original, tool, inputSchema, schemaHash, changed: false, sameSchema: true };
    }
    const inputSchema = tool?.inputSchema;
    if (entry?.inputSchema !== undefined && sameJson(entry.inputSchema, inputSchema)) {
      // The copy already held: callers listed the same schema share one object, not one each.
      const { schemaHash, inputSchema: held } = entry;
      return {
        name,
        original,
        tool,
        inputSchema: held,
        schemaHash,
        changed: false,
        sameSchema: true,
      };
    }
    const hash = schemaHash(inputSchema, tool?.schemaJson);
    const changed =
      entry === undefined || entry.inputSchema !== undefined || entry.schemaHash !== hash;
    return { name, original, tool, inputSchema, schemaHash: hash, changed, sameSchema: false };
  });
  const names = new Map(assignments.map(({ original, name }) => [original, name]));
  const renames = assignments
    .filter(({ original, name }) => name !== original)
    .map(({ original, name, reasons }) => ({ from: original, to: name, reasons }));
  return { entries, names, renames, displaced, taken };
}
