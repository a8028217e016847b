/**
 * The map's entries a listing's plan makes (plan-listing.ts), remembered in
 * the isolate: each tool's entry and name, and where `TOOL_CHANGES` pins
 * definitions, its definition as this listing lists it, what its pins are
 * decided from (pin-listing.ts). A tool written as the isolate last read it
 * keeps what it was listed with, read again from nothing.
 */
import type { ChangeScope } from "../rules/tool-rules";
import { definitionOf, type ListedDefinition, pinOf } from "./definition-pins";
import type { OriginMemory } from "./isolate-memory";
import type { ProvenPins } from "./listing-pin";
import { today } from "./map-merge";
import { entryChars, ListedEntry, type ListingPlan, type ToolEntry } from "./plan-listing";
import type { ProfileNames } from "./profile-names";

export interface ListedEntries {
  /** Each pinned tool's definition: decided from this listing's own, as memory may not keep them all. */
  definitions: ListedDefinition[];
  /** Each tool's entry as this listing made it: the caller's view keeps their own schemas. */
  remembered: Map<string, ToolEntry>;
}

export function rememberEntries(
  plan: ListingPlan,
  origin: OriginMemory,
  names: ProfileNames,
  /** The originals written as the isolate last read them (`OriginMemory.writtenAsBefore`). */
  asListed: ReadonlySet<string>,
  /** Where definitions are pinned: under which scope, and the pins a listing pin proves. */
  pinning: { scope: ChangeScope | undefined; proven: ProvenPins } | undefined,
): ListedEntries {
  const day = today();
  const definitions: ListedDefinition[] = [];
  const remembered = new Map<string, ToolEntry>();
  for (const entry of plan.entries) {
    const { name, original, tool, schemaHash, schemaChars, sameSchema } = entry;
    const before = origin.tools.get(original)?.listed;
    const known = sameSchema ? before?.definition : undefined;
    const listed =
      before && asListed.has(original)
        ? before
        : {
            annotations: tool?.annotations,
            ...(pinning && tool
              ? {
                  definition: definitionOf(tool, schemaHash, known, pinning.scope, () =>
                    pinning.proven.of(original),
                  ),
                }
              : {}),
          };
    if (listed.definition) {
      // Its pin under the other scope only where a pin of that scope is to be read (caller-pins.ts).
      const pinAs = tool && ((scope: ChangeScope) => pinOf(tool, schemaHash, scope));
      definitions.push({ original, definition: listed.definition, ...(pinAs ? { pinAs } : {}) });
    }
    const chars = entryChars(original, tool, schemaChars, listed);
    const made = new ListedEntry(original, schemaHash, schemaChars, chars, listed, entry);
    origin.remember(made, day);
    remembered.set(original, made);
    names.remember(name, original);
  }
  return { definitions, remembered };
}
