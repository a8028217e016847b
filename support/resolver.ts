/** A tool resolver without a tool map, for unit tests and benchmarks of a call's way to the origin. */
import type { ToolRule } from "../src/rules/tool-rules";
import type { SchemaView } from "../src/schemas/view";
import type { ToolEntry } from "../src/toolmap/plan-listing";
import type { ToolResolver } from "../src/toolmap/resolve-tool";

/**
 * Finds `entry` for any name, a tool shown to the caller under the name called (from memory),
 * with the `view` the model was shown of its schema and the operator's `rule`, where given.
 */
export function resolverOf(
  entry: ToolEntry,
  { view, rule }: { view?: SchemaView; rule?: ToolRule | undefined } = {},
): ToolResolver {
  const tool = {
    entry,
    source: "memory" as const,
    by: "listed" as const,
    shown: true,
    ...(view ? { view } : {}),
    ...(rule ? { rule } : {}),
  };
  return Object.assign(
    async (name: string) => ({ kind: "resolved" as const, tool: { ...tool, name } }),
    {
      refusalOf: async () => undefined,
      closest: async () => undefined,
      handedOutFor: () => undefined,
      ruleOf: () => rule,
      refusesCalls: false,
      relisted: () => false,
    },
  );
}
