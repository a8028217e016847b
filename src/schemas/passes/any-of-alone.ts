/**
 * `anyOf` with no other keyword beside it but what the provider allows there:
 *
 * - strict mode (providers/openai-strict.ts) keeps `description` and `title`
 *   beside it (the OpenAI Agents SDK refuses `anyOf` combined with another
 *   keyword);
 * - Gemini and Vertex AI (providers/gemini.ts) keep nothing beside it: `schema
 *   specified other fields alongside any_of. When using any_of, it must be the
 *   only field set`, for a `description` or `nullable` too.
 *
 * Every other keyword goes into each branch, which says the same (a value
 * must match the node's keywords and one branch); where a branch has its
 * own, the branch's stays (a `description` follows the node's). A branch of
 * one type takes only what constrains that type: a keyword of another type
 * says nothing there, and an `enum` value of another type matches nothing
 * there (a provider that checks enum values against the type, as Gemini
 * does, refuses one). A branch whose type takes none of the node's `enum`
 * accepts nothing, and is left out. A branch that asks for JSON text takes
 * words only: the node's other keywords speak of the value the text writes,
 * which validation checks on the way back, not of the text. Where enums are
 * strings only (Gemini), an `enum` beside `anyOf` names every value the node
 * takes, as a string: the node is that enum (with what constrains strings),
 * and the forms are left to validation.
 */
import { isPlainObject } from "../../json";
import { constrains, isOfType } from "../keywords";
import { noteOn } from "../notes";
import type { Pass, ViewContext } from "../pass";

type Schema = Record<string, unknown>;

/** What a branch that asks for JSON text takes of the node's keywords. */
const TEXT_TAKES = new Set(["description", "title", "nullable"]);
/** Branches inside branches, each given the node's keywords anew: as deep as a view nests. */
const MAX_NESTED = 32;

/** What of `siblings` a branch of `type` takes; `undefined` when it takes no value of their `enum`. */
function siblingsFor(siblings: Schema, type: unknown) {
  if (typeof type !== "string") return siblings;
  const kept = Object.fromEntries(
    Object.entries(siblings).filter(([key]) => constrains(key, type)),
  );
  if (!Array.isArray(kept.enum)) return kept;
  const values = kept.enum.filter((value) => isOfType(value, type));
  return values.length === 0 ? undefined : { ...kept, enum: values };
}

/** `branch` with `siblings` beside its own keywords, which stay; a description after the node's. */
function merged(siblings: Schema, branch: Schema): Schema {
  const result: Schema = { ...siblings, ...branch };
  if (typeof siblings.description === "string" && typeof branch.description === "string") {
    result.description = noteOn(siblings.description, branch.description);
  }
  return result;
}

function alone(schema: Schema, words: ReadonlySet<string>, view: ViewContext, depth: number) {
  const moved = Object.keys(schema).filter((key) => !words.has(key));
  const siblings = Object.fromEntries(moved.map((key) => [key, schema[key]]));
  const intoBranch = (branch: Schema, taken: Schema): Schema => {
    const result = merged(taken, branch);
    view.keepAsText(branch, result);
    // A branch with forms of its own now has the node's keywords beside them.
    const nested = Array.isArray(result.anyOf) && Object.keys(result).some((k) => !words.has(k));
    return nested && depth < MAX_NESTED ? alone(result, words, view, depth + 1) : result;
  };
  const branches = (schema.anyOf as unknown[]).flatMap((branch) => {
    if (!isPlainObject(branch)) return [branch];
    if (view.asksForText(branch)) {
      const words = Object.entries(siblings).filter(([key]) => TEXT_TAKES.has(key));
      return [intoBranch(branch, Object.fromEntries(words))];
    }
    const taken = siblingsFor(siblings, branch.type);
    return taken === undefined ? [] : [intoBranch(branch, taken)];
  });
  // Where no branch takes a value of the enum, the node accepts none: it says so as it did.
  schema.anyOf =
    branches.length > 0
      ? branches
      : (schema.anyOf as unknown[]).map((branch) =>
          isPlainObject(branch) ? merged(siblings, branch) : branch,
        );
  for (const key of moved) delete schema[key];
  return schema;
}

/** The pass that leaves `anyOf` beside `words` only; `stringEnums`: the provider's enums are strings. */
function anyOfBeside(words: ReadonlySet<string>, stringEnums: boolean): Pass {
  return {
    phase: "leave",
    reads: ["anyOf"],
    needed: (node) => Array.isArray(node.anyOf) && Object.keys(node).some((key) => !words.has(key)),
    apply: (schema, _at, view) => {
      view.applied.add("any_of_alone");
      // Each branch took the node's keywords: its enum, its properties, counted once.
      view.uncount();
      if (stringEnums && Array.isArray(schema.enum)) {
        delete schema.anyOf;
        // A string now: what constrains another type (a branch's `minimum`) says nothing of it.
        for (const key of Object.keys(schema)) if (!constrains(key, "string")) delete schema[key];
        return schema;
      }
      return alone(schema, words, view, 0);
    },
  };
}

export const anyOfAlone = anyOfBeside(new Set(["anyOf", "description", "title"]), false);
export const anyOfOnly = anyOfBeside(new Set(["anyOf"]), true);
