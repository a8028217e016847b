/**
 * Finds the tool behind a model-facing name: the map first (memory, then KV),
 * and on a miss the origin itself (`relist`, which the caller makes ask at
 * most once per client request however many calls the request carries, and
 * not again for a minute for the same caller and session (`ToolMap.relistedLately`),
 * and which names what it learns in the map). A name the map could never have handed out
 * (illegal under the profile, or longer than its cap: an original name, or
 * junk) costs no lookup; its call goes on as it came, under the operator's
 * policy for that original (`refusalOf`, `ruleOf`), which asks for a
 * listing of the caller's only where it judges by one (annotations, pins,
 * and while it refuses calls, whether the origin lists the name at all) and
 * the caller has none here.
 */
import { refusesCalls, type ToolRule } from "../rules/tool-rules";
import type { Resolution, ToolMap } from "./tool-map";

export type ResolvedTool = Omit<Resolution, "source"> & { source: Resolution["source"] | "relist" };

/** The tool behind `name`, called by `cause` (the client's `tools/call`, on whose behalf a re-list asks). */
export interface ToolResolver {
  (name: string, cause: unknown): Promise<ResolvedTool | undefined>;
  /**
   * Why the operator's policy refuses a call naming a tool by its original
   * name, if it does: where the policy needs a listing this isolate has not
   * seen, after asking the origin for one (on behalf of `cause`).
   */
  refusalOf(original: string, cause: unknown): Promise<Resolution["refused"]>;
  /** The operator's rule for a tool a call names by its original name, if there is one. */
  ruleOf(original: string): ToolRule | undefined;
  /** Whether the operator's policy refuses some calls (`refusesCalls`): then a call must name its tool. */
  refusesCalls: boolean;
}

export function toolResolver(
  toolMap: ToolMap,
  /** Asks the origin for its whole listing and names it; whether it was read. */
  relist: (cause: unknown) => Promise<boolean>,
): ToolResolver {
  const resolve = async (name: string, cause: unknown) => {
    if (!toolMap.couldHaveNamed(name)) return undefined;
    const known = await toolMap.resolve(name);
    // A tool the policy can judge only from a listing of the caller's, which they have none of here.
    if (known && known.refused !== "unchecked") return known;
    await relist(cause);
    const learned = await toolMap.resolve(name);
    return learned && { ...learned, source: "relist" as const };
  };
  return Object.assign(resolve, {
    refusalOf: async (original: string, cause: unknown) => {
      const refused = await toolMap.refusalOf(original);
      if (refused !== "unchecked") return refused;
      return (await relist(cause)) ? toolMap.refusalOf(original) : "unchecked";
    },
    ruleOf: (original: string) => toolMap.policy.rules.ruleFor(original),
    refusesCalls: refusesCalls(toolMap.policy),
  });
}
