/**
 * A listing as the model sees it, what naming it (tool-map.ts
 * `nameListing`) gives the rewrite (rewrite/tools-list.ts,
 * rewrite/listing-splice.ts): each tool's model-facing name, schema view and
 * description, and the tools left out.
 */
import { logEvent } from "../log";
import { firstOfItsName, type ListedTool } from "../protocol/tools-list";
import type { ToolSearch } from "./tool-search";

/** A listing page as the model sees it: original → model-facing name, and → schema view where it differs. */
export interface NamedListing {
  names: Map<string, string>;
  schemas: Map<string, unknown>;
  /** original → why its view is beyond the provider's limits (the listing marks the tool). */
  unfit: Map<string, string>;
  /** original → the description the operator's rules give it, where they change it. */
  descriptions: Map<string, string | undefined>;
  /**
   * original → the members its tool is shown without, which MCP's clients
   * refuse (protocol/tool-shape.ts `misshapenMembers`: `description`,
   * `annotations.readOnlyHint`, …); `inputSchema` among them is written as
   * `schemas` holds it (`SchemaViews.anyArguments`: the profile's view of any arguments).
   */
  misshapen: ReadonlyMap<string, readonly string[]>;
  /** Originals left out of the listing: hidden by the operator's rules, or held. */
  hidden: Set<string>;
  /**
   * Originals read from a text that writes a key twice in their input
   * schema, annotations or output schema: written again from the proxy's
   * reading, so no client reads a definition other than the one pinned and
   * checked.
   */
  twoWays: Set<string>;
  /**
   * Whether the names took every name KV holds into account; not when the map
   * could not be read (a name may then stand for another tool): such a
   * listing is answered but never remembered.
   */
  settled: boolean;
  /**
   * Whether what the listing shows depends on its caller as well as on the
   * origin's listing: under `TOOL_CHANGES=hold`, each caller's own pins
   * decide what is held. Its `cacheScope` is then the caller's alone
   * (rewrite/tools-list.ts `scopedToCaller`).
   */
  perCaller: boolean;
  /** A whole listing over the profile's ceiling: search mode, its tools as a search finds them. */
  search?: ToolSearch;
}

/**
 * A listing's tools, each name's first only, as the listing the client gets
 * shows them (`firstOfItsName`); a name written again is logged.
 */
export function firstOfEachName(tools: readonly ListedTool[]): readonly ListedTool[] {
  const seen = new Set<string>();
  const first: ListedTool[] = [];
  const repeated = new Set<string>();
  for (const tool of tools) {
    if (firstOfItsName(tool, seen)) first.push(tool);
    else repeated.add(tool.name);
  }
  if (repeated.size === 0) return tools;
  logEvent("tool_listed_twice", { tools: [...repeated] });
  return first;
}

/**
 * How large a listing named from scratch in an isolate must be to be logged
 * (`listing_large`): about half the tools, or a text about twice as long as
 * theirs, whose first naming passes a Free plan's 10 ms of CPU
 * (docs/limits.md: some 480 tools written out whole).
 */
const LARGE_LISTING = { tools: 250, chars: 1024 * 1024 };

/**
 * Logs the size of a listing an isolate names from scratch, where it is
 * large enough to cost, and says whether it is: called before the work, so
 * that a listing the runtime stops for its CPU (error 1102, which no answer
 * or data point follows) leaves this line. `chars`: the text the tools were
 * read from (none for a listing parsed whole).
 */
export function noteLargeListing(tools: readonly ListedTool[], profile: string): boolean {
  let chars = 0;
  for (const { written } of tools) if (written) chars += written.span[1] - written.span[0];
  if (tools.length < LARGE_LISTING.tools && chars < LARGE_LISTING.chars) return false;
  logEvent("listing_large", { profile, tools: tools.length, chars });
  return true;
}
