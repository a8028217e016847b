/**
 * Each tool's input schema as a profile shows it (schemas/view.ts), with
 * what the operator's rules take out of it (`fixed` arguments, rules/
 * apply-rules.ts): computed once per tool and schema, and kept in isolate
 * memory with the profile's names (profile-names.ts `ProfileNames.views`),
 * and let go with its tool (`OriginMemory.remember`), or with every view of
 * the origin once what they inline from `$ref`s passes `MAX_VIEW_INLINED`.
 */
import { isPlainObject } from "../json";
import { logEvent } from "../log";
import { ANY_ARGUMENTS, rootReadsWell, rootTextReadsWell } from "../protocol/tool-shape";
import { presentedSchema, shapesSchema } from "../rules/apply-rules";
import type { ToolPolicy } from "../rules/tool-rules";
import type { Profile } from "../schemas/profile";
import { changesNothing, type SchemaView, schemaView } from "../schemas/view";
import { MAX_VIEW_INLINED, type OriginMemory } from "./isolate-memory";
import type { SchemaHolder } from "./listed-schema";
import type { ToolEntry } from "./plan-listing";
import type { ProfileNames } from "./profile-names";
import { MAX_TOOLS } from "./stored-map";
import type { SearchViews } from "./tool-search";

type Viewed = Pick<ToolEntry, "original" | "inputSchema" | "schemaHash"> & SchemaHolder;

/**
 * Whether the schema `tool` holds has a root every client takes (or none, a
 * tool the listing shows `anyArguments` for): from its text while unread.
 */
function rootReadsWellHeld(tool: Viewed): boolean {
  const unread = tool.listedSchema?.unread;
  const told = unread === undefined ? undefined : rootTextReadsWell(unread, 0);
  if (told !== undefined) return told;
  const { inputSchema } = tool;
  return !isPlainObject(inputSchema) || rootReadsWell(inputSchema);
}

/** Root names a `schemas_adapted` line maps, origin's to shown, of one view; the rest are not named. */
const MAX_KEYS_LOGGED = 10;

/**
 * What a `schemas_adapted` line says of a view made now, with the root's names it renamed: the
 * model sends those, and the origin receives its own.
 */
function adaptedOf(tool: string, view: SchemaView): Record<string, unknown> {
  const { rules, dropped, unfit, keys } = view;
  const renamed = [...(keys ?? [])]
    .slice(0, MAX_KEYS_LOGGED)
    .map(([shown, origin]) => ({ from: origin, to: shown }));
  return {
    tool,
    rules,
    dropped,
    ...(unfit === undefined ? {} : { unfit }),
    ...(renamed.length > 0 ? { keys: renamed } : {}),
  };
}

export class SchemaViews {
  #anyArguments: unknown;

  constructor(
    private readonly profile: Profile,
    private readonly policy: ToolPolicy,
    /** This profile's names, looked up each time: the origin's memory may drop them. */
    private readonly names: () => ProfileNames,
    /** The origin's memory, whose views (every profile's) are weighed together. */
    private readonly origin: OriginMemory,
  ) {}

  /**
   * What a tool whose input schema is no object, or absent, is shown in its place
   * (shown-members.ts, and a search's): the profile's view of one that takes any arguments.
   * `{"type":"object"}` alone, which every MCP client takes, OpenAI's function calling refuses
   * (`object schema missing properties`; strict mode, without `additionalProperties: false`),
   * and Gemini's, with the whole request that lists it.
   */
  anyArguments(): unknown {
    this.#anyArguments ??= schemaView(ANY_ARGUMENTS, this.profile.schemas).schema;
    return this.#anyArguments;
  }

  /**
   * original → schema view, for the tools whose view differs, and → why a view
   * is still beyond the provider's limits; views computed now are logged.
   * What they inline from `$ref`s together is bounded as the isolate's views
   * are (`MAX_VIEW_INLINED`): the listing holds them all while its answer is
   * written, and an origin's 128 schemas of 1,200 characters each held
   * 140 MiB so (test/node/schema-views-memory.test.ts). Past it, a view asks
   * for what its `$ref`s point at as JSON text.
   */
  ofListing(entries: ReadonlyArray<Viewed & { name: string }>): {
    schemas: Map<string, unknown>;
    unfit: Map<string, string>;
  } {
    const schemas = new Map<string, unknown>();
    const unfit = new Map<string, string>();
    const adapted: Array<Record<string, unknown>> = [];
    let room = MAX_VIEW_INLINED;
    for (const entry of entries) {
      const { view, fresh } = this.of(entry.name, entry, true, room) ?? {};
      room -= view?.inlined ?? 0;
      if (view?.unfit !== undefined) unfit.set(entry.original, view.unfit);
      if (!view?.differs) continue;
      schemas.set(entry.original, view.schema);
      if (fresh) adapted.push(adaptedOf(entry.original, view));
    }
    this.logAdapted(adapted);
    return { schemas, unfit };
  }

  /**
   * The views of a search's tools (search mode), each made when a search
   * reads it and kept as `of` keeps it, within the isolate's bound: the
   * search holds none (tool-search.ts `SearchViews`). Those made before its
   * index is built are logged then, as a listing logs its views. Its
   * closures, kept with the search past the request that listed it, hold
   * what this holds and `entries`, never the request's: made in a method of
   * their own, not in a scope of the request's (tool-map.ts `namesIn`).
   */
  forSearch(entries: ReadonlyArray<Viewed & { name: string }>): SearchViews {
    let byOriginal: Map<string, Viewed & { name: string }> | undefined;
    let adapted: Array<Record<string, unknown>> | undefined = [];
    return {
      of: (original) => {
        byOriginal ??= new Map(entries.map((entry) => [entry.original, entry]));
        const entry = byOriginal.get(original);
        if (entry !== undefined && !isPlainObject(entry.inputSchema)) return this.anyArguments();
        const { view, fresh } = (entry && this.of(entry.name, entry)) ?? {};
        if (!view?.differs) return undefined;
        if (fresh) adapted?.push(adaptedOf(original, view));
        return view.schema;
      },
      logMade: () => {
        if (adapted) this.logAdapted(adapted);
        adapted = undefined;
      },
    };
  }

  private logAdapted(adapted: Array<Record<string, unknown>>): void {
    if (adapted.length > 0)
      logEvent("schemas_adapted", { profile: this.profile.name, tools: adapted });
  }

  /**
   * The view of a tool's schema under the profile, from isolate memory while
   * the schema is the one viewed (the map holds one object for a schema listed
   * alike, plan-listing.ts); `undefined` where the profile changes no schema.
   * `keep`: a view made now is kept, in place of the tool's view before; not
   * that of a caller's own schema the map no longer holds (call-names.ts),
   * which would put out the view its listings show. `inlineRoom`: the nodes
   * it may inline from `$ref`s (`ofListing`).
   */
  of(
    name: string,
    tool: Viewed,
    keep = true,
    inlineRoom = Number.POSITIVE_INFINITY,
  ): { view: SchemaView; fresh: boolean } | undefined {
    const { original, schemaHash: hash } = tool;
    const rules = this.profile.schemas;
    const rule = this.policy.rules.ruleFor(original);
    const shaped = shapesSchema(rule);
    // Read only where a view is to be made: a schema listed as text stays unread (listed-schema.ts),
    // unless its text shows a root MCP's clients refuse (protocol/tool-shape.ts).
    if (changesNothing(rules) && !shaped && rootReadsWellHeld(tool)) return undefined;
    const { inputSchema } = tool;
    if (inputSchema === undefined) return undefined;
    const names = this.names();
    const known = names.views.get(name);
    // The view of this very schema: a fingerprint alone, a caller whose values a schema holds
    // could make collide with another caller's schema of the tool, and be shown its view.
    if (known?.hash === hash && known.schema === inputSchema && known.view.inlined <= inlineRoom) {
      return { view: known.view, fresh: false };
    }
    const viewed = schemaView(presentedSchema(inputSchema, rule), rules, inlineRoom);
    // Arguments the proxy sets are left out of what the model sees, whatever the profile.
    const view = shaped ? { ...viewed, differs: true } : viewed;
    if (!keep) return { view, fresh: true };
    if (names.views.size >= MAX_TOOLS) names.clearViews();
    if (view.inlined > 0) this.origin.roomForView(view.inlined);
    names.keepView(name, hash, inputSchema, view);
    return { view, fresh: true };
  }
}
