/**
 * What a model reads about the root's properties a view renamed
 * (schemas/passes/property-keys.ts): every text the edge writes for it names
 * them as the view does, never the origin's name it was not shown and whose
 * tool the provider would refuse to declare.
 */
import { describe, expect, it } from "vitest";
import type { JsonRpcRequest } from "../../src/protocol/jsonrpc";
import { revisionOf } from "../../src/protocol/revision";
import { repairToolCall } from "../../src/rewrite/tools-call";
import { SCHEMA_PASSES } from "../../src/schemas/profile";
import { schemaView } from "../../src/schemas/view";
import { resolverOf } from "../../support/resolver";
import { NAMES_HASHING_ALIKE } from "../helpers/names-hashing-alike";

const viewName = (keys: ReadonlyMap<string, string> | undefined, origin: string) =>
  [...(keys ?? [])].find(([, was]) => was === origin)?.[0] ?? "";

describe("a fix-it text under ARGUMENT_VALIDATION=enforce", () => {
  const original = {
    type: "object",
    properties: {
      "filter[id]": { type: "integer" },
      "Account Number": { type: "string", minLength: 3 },
    },
    required: ["filter[id]"],
  };

  async function answerTo(args: Record<string, unknown>) {
    const view = schemaView(original, SCHEMA_PASSES.anthropic);
    const resolver = resolverOf({ original: "t", schemaHash: "", inputSchema: original }, { view });
    const message: JsonRpcRequest = {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "t", arguments: args },
    };
    const outcome = await repairToolCall(message, resolver, "enforce", revisionOf(new Headers()));
    if (outcome.kind !== "answer") throw new Error(`not answered: ${outcome.kind}`);
    const { result } = outcome.response as { result: { content: Array<{ text: string }> } };
    return { text: result.content.map((part) => part.text).join("\n"), view };
  }

  it("names a renamed argument as the model's view does, missing, at fault, received or declared", async () => {
    const view = schemaView(original, SCHEMA_PASSES.anthropic);
    const account = viewName(view.keys, "Account Number");
    const id = viewName(view.keys, "filter[id]");
    const { text } = await answerTo({ [account]: "x", acount_number: "y" });
    expect(text).toContain(`missing required field \`${id}\``);
    expect(text).toContain(`\`${account}\``);
    expect(text).toContain("Declared arguments:");
    for (const origin of ["filter[id]", "Account Number"]) expect(text).not.toContain(origin);
    expect(text).toContain(`Unknown key \`acount_number\`: did you mean \`${account}\`?`);
  });
});

const declared = (schema: unknown) =>
  Object.keys((schema as { properties: Record<string, unknown> }).properties);

describe("a view's root", () => {
  it.each(["anthropic", "bedrock", "portable"] as const)(
    "%s: merged from a root anyOf, says its sets of fields by the names it declares",
    (profile) => {
      const original = {
        anyOf: [
          {
            type: "object",
            properties: { "filter[id]": { type: "string" } },
            required: ["filter[id]"],
          },
          { type: "object", properties: { $q: { type: "string" } }, required: ["$q"] },
        ],
      };
      const view = schemaView(original, SCHEMA_PASSES[profile]);
      const { description } = view.schema as { description: string };
      const [id, q] = ["filter[id]", "$q"].map((name) => viewName(view.keys, name));
      expect(declared(view.schema)).toEqual([id, q]);
      expect(description).toContain(`(1) \`${id}\`; (2) \`${q}\``);
      expect(description).not.toContain("filter[id]");
    },
  );

  it("anthropic: names in dependentRequired are the ones it declares", () => {
    const original = {
      type: "object",
      properties: { "a b": { type: "string" }, "c d": { type: "string" } },
      dependentRequired: { "a b": ["c d"] },
    };
    const view = schemaView(original, SCHEMA_PASSES.anthropic);
    const [ab, cd] = ["a b", "c d"].map((name) => viewName(view.keys, name));
    expect(view.schema).toMatchObject({ dependentRequired: { [ab as string]: [cd] } });
  });
});

describe("an origin's names that read alike", () => {
  it("each get a name of their own, in time linear in their number", () => {
    const original = {
      type: "object",
      properties: Object.fromEntries(NAMES_HASHING_ALIKE.map((name) => [name, { type: "string" }])),
    };
    const started = performance.now();
    const view = schemaView(original, SCHEMA_PASSES.anthropic);
    const elapsed = performance.now() - started;
    const shown = declared(view.schema);
    expect(new Set(shown).size).toBe(NAMES_HASHING_ALIKE.length);
    for (const name of shown) expect(name).toMatch(/^[a-zA-Z0-9_.-]{1,64}$/);
    // On the code before, each name tried every key the ones before it had taken: 13 s.
    expect(elapsed).toBeLessThan(1_000);
  });
});
