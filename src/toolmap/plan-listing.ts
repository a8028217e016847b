/**
 * What one `tools/list` page does to the tool map, decided without I/O: each
 * tool's model-facing name (names/assign.ts) and which entries are new or
 * changed, and so must be written to KV. Pure, so it is tested and benchmarked
 * on its own; tool-map.ts applies the plan to memory and KV.
 *
 * A schema is compared with the one the isolate remembers when it has it
 * (a structural comparison), and hashed only when it does not: hashing every
 * schema of a large listing costs more CPU than all the rest of the plan.
 */
import { dequal } from "dequal/lite";
import { assignNames, type Displacement, type KnownNames } from "../names/assign";
import type { NameRules } from "../names/profiles";
import type { RenameReason } from "../names/sanitize";
import { fnv1a32 } from "../names/stable-hash";
import type { ListedTool } from "../protocol/tools-list";

/** What the map holds under a model-facing name. */
export interface ToolEntry {
  original: string;
  /** Hash of `inputSchema`, to tell a changed tool from a known one without reading it. */
  schemaHash: string;
  /** `undefined` until read: a cold isolate learns names first, schemas on demand. */
  inputSchema?: unknown;
}

/** What the map already holds. */
export interface KnownTools extends KnownNames {
  entryOf(name: string): ToolEntry | undefined;
}

export interface PlannedEntry {
  name: string;
  original: string;
  inputSchema: unknown;
  schemaHash: string;
  /** New, renamed or with a different `inputSchema`: the map must store it. */
  changed: boolean;
}

export interface ListingPlan {
  /** One per distinct original, in code-unit order. */
  entries: PlannedEntry[];
  /** Original → model-facing name. */
  names: Map<string, string>;
  /** The tools whose model-facing name differs from their own, and why: the `tools_renamed` log line. */
  renames: Array<{ from: string; to: string; reasons: RenameReason[] }>;
  /** Names that now stand for another tool than before. */
  displaced: Displacement[];
}

/** Tells a changed `inputSchema` from a known one without storing or reading the schema. */
export function schemaHash(inputSchema: unknown): string {
  return fnv1a32(JSON.stringify(inputSchema ?? null)).toString(36);
}

export function planListing(
  tools: readonly ListedTool[],
  known: KnownTools,
  rules: NameRules,
): ListingPlan {
  const { assignments, displaced } = assignNames(
    tools.map((tool) => tool.name),
    known,
    rules,
  );
  const schemas = new Map(tools.map((tool) => [tool.name, tool.inputSchema]));
  const entries = assignments.map(({ original, name }): PlannedEntry => {
    const inputSchema = schemas.get(original);
    const entry = known.entryOf(name);
    const unchanged =
      entry?.original === original &&
      entry.inputSchema !== undefined &&
      dequal(entry.inputSchema, inputSchema);
    if (unchanged) {
      return { name, original, inputSchema, schemaHash: entry.schemaHash, changed: false };
    }
    const hash = schemaHash(inputSchema);
    const changed = entry?.original !== original || entry.schemaHash !== hash;
    return { name, original, inputSchema, schemaHash: hash, changed };
  });
  const names = new Map(assignments.map(({ original, name }) => [original, name]));
  const renames = assignments
    .filter(({ original, name }) => name !== original)
    .map(({ original, name, reasons }) => ({ from: original, to: name, reasons }));
  return { entries, names, renames, displaced };
}
