/**
 * The tool map: for every listed tool, model-facing name → original name and
 * `inputSchema`, and original → model-facing name. Isolate memory in front of
 * Workers KV (binding `TOOL_MAP`). The storage schema and the cost rules are
 * in README ("The tool map (KV)"); ARCHITECTURE.md says what a change to them
 * must keep.
 *
 * The metadata carries the original name, so a cold isolate learns every name
 * from one `list()` per 1,000 tools and reads a schema only when a call needs
 * it. Model-facing names are at most 128 ASCII characters, so keys stay far
 * under KV's 512-byte limit; an original too long for KV's 1,024-byte metadata
 * is read from the value instead.
 *
 * Platform limits: KV is eventually consistent (another location may not see a
 * write for 60 s or more) and can fail. Every KV error is a miss, logged, never
 * a failed request; the caller falls back to asking the origin (relist.ts).
 * KV has no compare-and-swap: two isolates naming a brand-new tool at the same
 * moment can disagree until the next listing; names are deterministic, so they
 * only differ when the map itself differed.
 */

import { BoundedMap } from "../bounded-map";
import { logEvent } from "../log";
import type { NameRules } from "../names/profiles";
import { isLegalName } from "../names/sanitize";
import type { ListedTool } from "../protocol/tools-list";
import type { Profile } from "../schemas/profile";
import { changesNothing } from "../schemas/rules";
import { type SchemaRule, type SchemaView, schemaView } from "../schemas/view";
import { type PlannedEntry, planListing, schemaHash, type ToolEntry } from "./plan-listing";

interface StoredTool {
  original: string;
  inputSchema: unknown;
}

interface ToolMetadata {
  original?: string;
  schema: string;
}

const MAX_SCOPES = 16;
const MAX_ENTRIES_PER_SCOPE = 10_000;
const MAX_KV_LIST_PAGES = 10;
const MAX_METADATA_ORIGINAL_BYTES = 512;

const encoder = new TextEncoder();

/** What one isolate remembers of one scope. */
class ScopeMemory {
  readonly byName = new Map<string, ToolEntry>();
  readonly byOriginal = new Map<string, string>();
  /** Each tool's schema view under the scope's profile, valid while its schema hash is `hash`. */
  readonly views = new Map<string, { hash: string; view: SchemaView }>();
  /** The KV listing, loaded once (or in flight): whether it could be read. */
  loaded: Promise<boolean> | undefined;

  remember(name: string, entry: ToolEntry): void {
    if (this.byName.size >= MAX_ENTRIES_PER_SCOPE && !this.byName.has(name)) this.clear();
    const previous = this.byName.get(name);
    if (previous && previous.original !== entry.original) {
      if (this.byOriginal.get(previous.original) === name)
        this.byOriginal.delete(previous.original);
    }
    const oldName = this.byOriginal.get(entry.original);
    if (oldName !== undefined && oldName !== name) this.byName.delete(oldName);
    this.byName.set(name, entry);
    this.byOriginal.set(entry.original, name);
  }

  clear(): void {
    this.byName.clear();
    this.byOriginal.clear();
    this.views.clear();
    this.loaded = undefined;
  }
}

/**
 * The isolate's memory of every scope it has served, least recently used first
 * out beyond `MAX_SCOPES`. One lives as long as the isolate.
 */
export class ToolMapMemory {
  private readonly scopes = new BoundedMap<string, ScopeMemory>(MAX_SCOPES);

  scope(id: string): ScopeMemory {
    let scope = this.scopes.get(id);
    if (!scope) {
      scope = new ScopeMemory();
      this.scopes.set(id, scope);
    }
    return scope;
  }
}

const scopes = new Map<string, Promise<string>>();

/**
 * The scope of a map: origin, profile and cap, hashed, so changing any of them
 * starts afresh. Computed once per configuration an isolate sees, not per request.
 */
export function toolMapScope(originUrl: URL, rules: NameRules): Promise<string> {
  const identity = `${originUrl.href}\n${rules.profile.name}\n${rules.cap}`;
  let scope = scopes.get(identity);
  if (!scope) {
    if (scopes.size >= MAX_SCOPES) scopes.clear();
    scope = crypto.subtle.digest("SHA-256", encoder.encode(identity)).then((digest) => {
      const hex = [...new Uint8Array(digest).slice(0, 8)]
        .map((byte) => byte.toString(16).padStart(2, "0"))
        .join("");
      return `v1:${hex}`;
    });
    scopes.set(identity, scope);
  }
  return scope;
}

export interface Resolution {
  entry: ToolEntry;
  source: "memory" | "kv";
  /** The schema the model was shown, where it differs from the origin's. */
  view?: SchemaView;
}

/** A listing page as the model sees it: original → model-facing name, and → schema view where it differs. */
export interface NamedListing {
  names: Map<string, string>;
  schemas: Map<string, unknown>;
}

export class ToolMap {
  private readonly scope: ScopeMemory;
  private readonly prefix: string;

  constructor(
    private readonly kv: KVNamespace,
    scopeId: string,
    private readonly profile: Profile,
    memory: ToolMapMemory,
    private readonly waitUntil: (promise: Promise<unknown>) => void,
  ) {
    this.scope = memory.scope(scopeId);
    this.prefix = `${scopeId}:tool:`;
  }

  /**
   * Names the tools of one listing (one page), remembers them, stores what
   * changed, and views their schemas under the profile (a view is computed
   * once per tool and schema, then reused from isolate memory).
   */
  async nameListing(tools: readonly ListedTool[]): Promise<NamedListing> {
    const storedKnown = await this.loadFromKv();
    const scope = this.scope;
    const plan = planListing(
      tools,
      {
        nameOf: (original) => scope.byOriginal.get(original),
        originalOf: (name) => scope.byName.get(name)?.original,
        entryOf: (name) => scope.byName.get(name),
      },
      this.profile.names,
    );
    for (const { name, original, schemaHash, inputSchema } of plan.entries) {
      scope.remember(name, { original, schemaHash, inputSchema });
    }
    // Names planned without KV's names could take a stored name for another tool: not stored.
    const changed = storedKnown ? plan.entries.filter((entry) => entry.changed) : [];
    if (changed.length > 0) this.waitUntil(this.store(changed));

    if (plan.renames.length > 0) {
      const { profile, cap } = this.profile.names;
      logEvent("tools_renamed", { profile: profile.name, cap, renames: plan.renames });
    }
    for (const displacement of plan.displaced)
      logEvent("tool_name_reassigned", { ...displacement });
    return { names: plan.names, schemas: this.viewSchemas(plan.entries) };
  }

  /** original → schema view, for the tools whose view differs; views computed now are logged. */
  private viewSchemas(entries: readonly PlannedEntry[]): Map<string, unknown> {
    const schemas = new Map<string, unknown>();
    const adapted: Array<{ tool: string; rules: SchemaRule[]; dropped: string[] }> = [];
    for (const entry of entries) {
      const { view, fresh } = this.viewOf(entry.name, entry) ?? {};
      if (!view?.differs) continue;
      schemas.set(entry.original, view.schema);
      if (fresh) adapted.push({ tool: entry.original, rules: view.rules, dropped: view.dropped });
    }
    if (adapted.length > 0)
      logEvent("schemas_adapted", { profile: this.profile.name, tools: adapted });
    return schemas;
  }

  /**
   * The view of a tool's schema under the profile, from isolate memory while
   * the schema's hash is unchanged; `undefined` where the profile changes no schema.
   */
  private viewOf(
    name: string,
    { inputSchema, schemaHash: hash }: Pick<ToolEntry, "inputSchema" | "schemaHash">,
  ): { view: SchemaView; fresh: boolean } | undefined {
    const rules = this.profile.schemas;
    if (changesNothing(rules) || inputSchema === undefined) return undefined;
    const known = this.scope.views.get(name);
    if (known?.hash === hash) return { view: known.view, fresh: false };
    if (this.scope.views.size >= MAX_ENTRIES_PER_SCOPE) this.scope.views.clear();
    const view = schemaView(inputSchema, rules);
    this.scope.views.set(name, { hash, view });
    return { view, fresh: true };
  }

  /**
   * Whether `name` could be a model-facing name of this scope: legal under its
   * rules, so at most its cap long. No other name is looked up anywhere.
   */
  couldHaveNamed(name: string): boolean {
    return isLegalName(name, this.profile.names);
  }

  /** The tool a model-facing name stands for, with its schema and view: memory first, then KV. */
  async resolve(name: string): Promise<Resolution | undefined> {
    if (!this.couldHaveNamed(name)) return undefined;
    const known = this.scope.byName.get(name);
    if (known?.inputSchema !== undefined) return this.resolution(name, known, "memory");
    const stored = await this.kvRead(() => this.kv.get<StoredTool>(this.prefix + name, "json"));
    if (!stored || typeof stored.original !== "string") {
      return known ? this.resolution(name, known, "memory") : undefined;
    }
    const entry = { ...stored, schemaHash: schemaHash(stored.inputSchema) };
    this.scope.remember(name, entry);
    return this.resolution(name, entry, "kv");
  }

  private resolution(name: string, entry: ToolEntry, source: Resolution["source"]): Resolution {
    const view = this.viewOf(name, entry)?.view;
    return view?.differs ? { entry, source, view } : { entry, source };
  }

  /** Drops this isolate's memory of the scope (the origin said its tools changed). */
  forget(): void {
    this.scope.clear();
  }

  /** Learns KV's names once per scope and isolate; false when KV could not be read (tried again next time). */
  private loadFromKv(): Promise<boolean> {
    this.scope.loaded ??= this.readAllNames().then(
      () => true,
      (error) => {
        this.scope.loaded = undefined;
        logEvent("kv_error", { op: "list", error: String(error) });
        return false;
      },
    );
    return this.scope.loaded;
  }

  private async readAllNames(): Promise<void> {
    let cursor: string | undefined;
    for (let page = 0; page < MAX_KV_LIST_PAGES; page++) {
      const listing = await this.kv.list<ToolMetadata>({ prefix: this.prefix, cursor });
      for (const key of listing.keys) {
        const name = key.name.slice(this.prefix.length);
        if (this.scope.byName.has(name) || typeof key.metadata?.schema !== "string") continue;
        const original = key.metadata.original ?? (await this.readOriginal(key.name));
        if (typeof original === "string") {
          this.scope.remember(name, { original, schemaHash: key.metadata.schema });
        }
      }
      if (listing.list_complete) return;
      cursor = listing.cursor;
    }
  }

  private async readOriginal(key: string): Promise<string | undefined> {
    return (await this.kv.get<StoredTool>(key, "json"))?.original;
  }

  private async store(changed: PlannedEntry[]): Promise<void> {
    const writes = changed.map(async ({ name, original, inputSchema, schemaHash: schema }) => {
      const fitsMetadata = encoder.encode(original).length <= MAX_METADATA_ORIGINAL_BYTES;
      const metadata: ToolMetadata = fitsMetadata ? { original, schema } : { schema };
      const stored: StoredTool = { original, inputSchema };
      await this.kv.put(this.prefix + name, JSON.stringify(stored), { metadata });
    });
    const failures = (await Promise.allSettled(writes)).filter((r) => r.status === "rejected");
    if (failures.length > 0) {
      logEvent("kv_error", {
        op: "put",
        failed: failures.length,
        of: writes.length,
        error: String((failures[0] as PromiseRejectedResult).reason),
      });
    }
  }

  private async kvRead<T>(read: () => Promise<T | null>): Promise<T | undefined> {
    try {
      return (await read()) ?? undefined;
    } catch (error) {
      logEvent("kv_error", { op: "get", error: String(error) });
      return undefined;
    }
  }
}
