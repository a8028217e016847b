/**
 * Finds the tool behind the name a call gives (docs/names.md, "Calls by
 * another spelling"):
 *
 * 1. A name the map handed out (memory, then KV); on a miss the origin
 *    itself (`relist`, which the caller makes ask at most once per client
 *    request however many calls the request carries, and not again for a
 *    minute for the same caller and session, `ToolMap.relistedLately`, and
 *    which names what it learns in the map). A name the map could never have
 *    handed out (illegal under the profile, or longer than its cap) costs no
 *    lookup and no listing.
 * 2. Else the caller's own whole listing (asked for first where the policy
 *    refuses calls and this isolate has none): the one tool of it that answers to
 *    the name (its original name, or its listed name in another case or
 *    without its fingerprint), resolved as a call by its listed name is, so
 *    the strict view's way back, the rules and the repairs follow the tool,
 *    not the spelling.
 * 3. Else no tool: the caller's names alike to it, where their whole
 *    listing is here and some are, for the proxy's did-you-mean answer;
 *    otherwise the call goes on as it came, under the operator's policy for
 *    that original (`refusalOf`, `ruleOf`), which asks for a listing of the
 *    caller's where it judges by one.
 */
import { refusesCalls, type ToolRule } from "../rules/tool-rules";
import type { Resolution } from "./call-names";
import type { ToolMap } from "./tool-map";

export type ResolvedTool = Omit<Resolution, "source"> & {
  source: Resolution["source"] | "relist";
  /** How the call's name was read: a name handed out, the tool's original, or another spelling. */
  by: "listed" | "original" | "repaired";
};

/** What the name a call gives stands for. */
export type Lookup =
  | { kind: "resolved"; tool: ResolvedTool }
  /** No tool: `closest`, the caller's closest names, where their whole listing is known here. */
  | { kind: "unknown"; closest?: string[] };

/** The tool behind `name`, called by `cause` (the client's `tools/call`, on whose behalf a re-list asks). */
export interface ToolResolver {
  (name: string, cause: unknown): Promise<Lookup>;
  /**
   * Why the operator's policy refuses a call naming a tool by its original
   * name, if it does: where the policy needs a listing this isolate has not
   * seen, after asking the origin for one (on behalf of `cause`).
   */
  refusalOf(original: string, cause: unknown): Promise<Resolution["refused"]>;
  /** The caller's closest names to `name`, where their whole listing is known here. */
  closest(name: string): Promise<string[] | undefined>;
  /** The original `name` was handed out for, where this isolate knows one (call-names.ts). */
  handedOutFor(name: string): string | undefined;
  /** The operator's rule for a tool a call names by its original name, if there is one. */
  ruleOf(original: string): ToolRule | undefined;
  /** Whether the operator's policy refuses some calls (`refusesCalls`): then a call must name its tool. */
  refusesCalls: boolean;
  /** Whether this request read the origin's whole listing for its caller so far (tool-map.ts `relistedHere`). */
  relisted(): boolean;
}

/**
 * `tool` without what its schema would have the proxy do (repair, read the
 * view's values back, validate): the schema the map holds is the last one
 * listed, which may be another caller's.
 */
function unschematic(tool: Resolution): Resolution {
  const { view: _view, ...rest } = tool;
  return { ...rest, entry: { original: tool.entry.original, schemaHash: tool.entry.schemaHash } };
}

export function toolResolver(
  toolMap: ToolMap,
  /** Asks the origin for its whole listing and names it; whether it was read. */
  relist: (cause: unknown) => Promise<boolean>,
  /**
   * Whether the call is checked against its tool's schema where the proxy
   * answers from it: its `Mcp-Param-*` headers (mcp-headers.ts
   * `sendsParamHeaders`). A tool's schema held here may be another caller's
   * (SECURITY.md, "What the proxy answers itself"), and a `Header mismatch`
   * from it would tell this caller which headers that schema declares: such
   * a call waits for the caller's own listing.
   */
  answersFromSchema = false,
): ToolResolver {
  const handedOut = async (name: string, cause: unknown) => {
    if (!toolMap.calls.couldHaveNamed(name)) return undefined;
    const known = await toolMap.calls.resolve(name);
    // Judged from the caller's own listing here (shown, hidden or held), it stands. Else they have
    // none here: a tool the policy can judge only from one, or whose schema (the map's, listed to
    // whoever listed last) the call would be repaired, read back and checked against, not known
    // to be theirs: an origin that lists one tool with another schema to each caller had the
    // caller's arguments repaired against another's, and its answer showed them so.
    if (known && known.refused !== "unchecked" && (known.shown || known.refused)) return known;
    await relist(cause);
    const learned = await toolMap.calls.resolve(name);
    if (learned && !learned.refused && !learned.shown) {
      // Still none of theirs (the limit allowed no listing, or it failed): where the call is
      // checked against the schema, it waits for theirs; else it goes on as they wrote it.
      return answersFromSchema
        ? { ...learned, refused: "unchecked" as const, source: "relist" as const }
        : { ...unschematic(learned), source: "relist" as const };
    }
    return learned && { ...learned, source: "relist" as const };
  };
  const resolve = async (name: string, cause: unknown): Promise<Lookup> => {
    const listed = await handedOut(name, cause);
    if (listed) return { kind: "resolved", tool: { ...listed, by: "listed" } };
    let spelled = await toolMap.calls.spelledAs(name);
    // Where the policy refuses calls, the caller's listing is asked for before a name is judged
    // (`refusalOf`): asked for here, another spelling is read against it as in a warm isolate,
    // not refused with the very tool it means as the one name alike.
    if (spelled === undefined && refusesCalls(toolMap.policy) && (await relist(cause))) {
      spelled = await toolMap.calls.spelledAs(name);
    }
    if (spelled === undefined) return { kind: "unknown" };
    // A name like none of theirs goes to the origin as it came: the origin's answer is the one.
    if ("closest" in spelled) {
      return spelled.closest.length > 0
        ? { kind: "unknown", closest: spelled.closest }
        : { kind: "unknown" };
    }
    const by = spelled.entry.original === name ? "original" : "repaired";
    return { kind: "resolved", tool: { ...spelled, by } };
  };
  return Object.assign(resolve, {
    refusalOf: async (original: string, cause: unknown) => {
      const refused = await toolMap.calls.refusalOf(original);
      if (refused !== "unchecked") return refused;
      return (await relist(cause)) ? toolMap.calls.refusalOf(original) : "unchecked";
    },
    closest: async (name: string) => {
      const match = await toolMap.calls.matchShown(name);
      if (match === undefined) return undefined;
      return match.kind === "one" ? [toolMap.calls.listedName(match.original)] : match.closest;
    },
    handedOutFor: (name: string) => toolMap.calls.handedOutFor(name),
    ruleOf: (original: string) => toolMap.policy.rules.ruleFor(original),
    refusesCalls: refusesCalls(toolMap.policy),
    relisted: () => toolMap.relistedHere,
  });
}
