/**
 * What one `tools/list` page does to the tool map, decided without I/O: each
 * tool's model-facing name (names/assign.ts) and which entries are new or
 * changed, and so must be written to KV. Pure, so it is tested and benchmarked
 * on its own; tool-map.ts applies the plan to memory and KV.
 *
 * A schema is compared with the one the isolate remembers when it has it
 * (a structural comparison), and fingerprinted only when it does not:
 * fingerprinting every schema of a large listing costs more CPU than all the
 * rest of the plan. Fingerprints changed once (`2.`, names/stable-hash.ts); tools
 * stored with the first kind are compared with that kind and moved to the
 * current one a few per listing (`MIGRATIONS_PER_LISTING`).
 */
import { dequal } from "dequal/lite";
import { assignNames, type Displacement, type KnownNames } from "../names/assign";
import type { NameRules } from "../names/profiles";
import type { RenameReason } from "../names/sanitize";
import { fingerprint32, fnv1a32 } from "../names/stable-hash";
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

/** The current fingerprints start with this; base 36 never holds a `.`. */
const FINGERPRINT_V2 = "2.";

/** Tells a changed `inputSchema` from a known one without storing or reading the schema. */
export function schemaHash(inputSchema: unknown): string {
  return FINGERPRINT_V2 + fingerprint32(JSON.stringify(inputSchema ?? null)).toString(36);
}

/** The first fingerprint (FNV-1a over UTF-8), still in the metadata of tools stored before `2.`. */
function firstSchemaHash(inputSchema: unknown): string {
  return fnv1a32(JSON.stringify(inputSchema ?? null)).toString(36);
}

/**
 * How many unchanged tools stored with the first fingerprint one listing
 * writes again with the current one: the migration costs one write per tool,
 * spread over listings, never a burst on the first listing after a deploy.
 */
export const MIGRATIONS_PER_LISTING = 50;

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
  let migrations = 0;
  const entries = assignments.map(({ original, name }): PlannedEntry => {
    const inputSchema = schemas.get(original);
    const entry = known.entryOf(name);
    const same = entry?.original === original ? entry : undefined;
    const first = same !== undefined && !same.schemaHash.startsWith(FINGERPRINT_V2);
    const unchanged =
      same !== undefined &&
      (same.inputSchema !== undefined
        ? dequal(same.inputSchema, inputSchema)
        : same.schemaHash === (first ? firstSchemaHash : schemaHash)(inputSchema));
    if (unchanged && !(first && migrations < MIGRATIONS_PER_LISTING)) {
      return { name, original, inputSchema, schemaHash: same.schemaHash, changed: false };
    }
    if (unchanged) migrations++;
    return { name, original, inputSchema, schemaHash: schemaHash(inputSchema), changed: true };
  });
  const names = new Map(assignments.map(({ original, name }) => [original, name]));
  const renames = assignments
    .filter(({ original, name }) => name !== original)
    .map(({ original, name, reasons }) => ({ from: original, to: name, reasons }));
  return { entries, names, renames, displaced };
}
