/**
 * One object schema from the branches of a composition: the union of their
 * properties; for `allOf` every branch's required fields, for `anyOf` and
 * `oneOf` those every branch requires, the forms spelled out in words. Used
 * at the root (passes/root-object.ts) and for `allOf` (passes/all-of.ts).
 */
import { MAX_REF_HOPS, refTarget, resolve, type Schema } from "../args/schema-reading";
import { isPlainObject, own, sameJson, setOwn } from "../json";
import { isNullSchema, typesOf } from "./keywords";
import { noteOn } from "./notes";
import { MAX_NODES } from "./pass";

/**
 * Rounds of merging one schema may take: a branch's own composition is merged
 * in the next. A loop, not a view per round: each view would take a stack
 * frame that a deep enough schema runs out of.
 */
export const MAX_MERGES = 16;

/**
 * Keywords, properties and required names one merge reads: past them, the branches left are not
 * merged (the first is always read whole). Branches may all be `$ref`s to one large definition,
 * which reading each whole multiplies: 1,000 of them to 1,000 properties made a million names
 * read and a view of 8 MB, its forms in words. A view holds no more nodes than this anyway.
 */
const MAX_READ = MAX_NODES;

/**
 * Whether two branches' lists under `name` are joined into one where both have one: forms
 * (`anyOf`, `oneOf`) in any merge, the model then offered each branch's (what holds of both
 * together, validation against the origin's schema checks), and an `allOf`'s in an `allOf`.
 */
const joins = (name: string, keyword: string) =>
  name === "anyOf" || name === "oneOf" || (name === "allOf" && keyword === "allOf");

/** Keywords of a branch not copied as they are: merged above, or meaning nothing here. */
const MERGED_APART = new Set(["properties", "required", "$ref"]);

/**
 * What one branch says: its `$ref`'s target and, from 2019-09 on, what it
 * says beside the `$ref` (`{"$ref": "#/$defs/Base", "properties": {…}}`),
 * both of which apply; at each hop of a chain of `$ref`s, as a target may
 * say more beside a `$ref` of its own. Without them, a view left those
 * properties out.
 */
function branchSchema(branch: unknown, root: Schema, hops = 0): Schema | undefined {
  if (!isPlainObject(branch)) return undefined;
  const ref = own(branch, "$ref");
  if (typeof ref !== "string" || !ref.startsWith("#")) return branch;
  if (hops >= MAX_REF_HOPS) return undefined;
  const target = branchSchema(refTarget(ref, root), root, hops + 1);
  const { $ref: _, ...beside } = branch;
  if (Object.keys(beside).length === 0) return target;
  if (!target) return beside;
  // An `allOf` beside the `$ref` is the branch's own, kept for the merge's next round (merged
  // here, a branch `$ref` in it began its chain anew, without end): as the schema of this merge,
  // its `allOf` would be left out.
  const { allOf, ...rest } = beside;
  const merged = mergeBranches(rest, "allOf", [target], root);
  if (Array.isArray(allOf)) {
    merged.allOf = [...new Set([...allOf, ...(Array.isArray(merged.allOf) ? merged.allOf : [])])];
  }
  return merged;
}

/**
 * The names every form of `list` requires: of an `allOf` whose branches each have an `anyOf`,
 * one list of forms joined from them (`joins`) requires no name all of them do, but each
 * list's stand. What it reads counts against the merge's `MAX_READ` (`room` left): past it,
 * none is known.
 */
function requiredByEvery(list: unknown[], root: Schema, room: number) {
  let every: Set<string> | undefined;
  let read = 0;
  for (const branch of list) {
    // The branch's own `required` and its `$ref`'s, read without a merge (which joins lists in
    // turn): a chain's hops between say none.
    const target = resolve(branch, root);
    if (target && isNullSchema(target)) continue;
    const required = [branch, target].flatMap((schema) =>
      isPlainObject(schema) && Array.isArray(schema.required) ? schema.required : [],
    );
    read += required.length + 1;
    if (read > room) return { names: [], read };
    const names = required.filter((name): name is string => typeof name === "string");
    every = new Set(every ? names.filter((name) => every?.has(name)) : names);
    if (every.size === 0) break;
  }
  return { names: [...(every ?? [])], read };
}

export function mergeBranches(
  schema: Schema,
  keyword: string,
  branches: unknown[],
  root: Schema,
): Schema {
  const result: Schema = { ...schema };
  delete result[keyword];
  const properties: Schema = { ...(isPlainObject(result.properties) ? result.properties : {}) };
  const own_ = Array.isArray(result.required) ? result.required : [];
  // A property the schema itself does not declare, as each branch declares it.
  const declarations = new Map<string, unknown[]>();
  const requiredSets: string[][] = [];
  const forms: string[] = [];
  // What the forms of an `allOf`'s branches require, where their lists are joined.
  const joinedRequired: string[] = [];
  // Lists read for what every form requires, and those joined here (read as their parts).
  const listsRead = new Set<unknown>();
  let read = 0;
  for (const branch of branches) {
    if (read >= MAX_READ) {
      // What the branches left require is not known: nothing is required of every one.
      requiredSets.push([]);
      forms.push("…");
      break;
    }
    const resolved = branchSchema(branch, root);
    if (!resolved || isNullSchema(resolved)) continue;
    read += Object.keys(resolved).length;
    const branchProperties = resolved.properties;
    if (isPlainObject(branchProperties)) {
      for (const [name, property] of Object.entries(branchProperties)) {
        read++;
        if (Object.hasOwn(properties, name)) continue;
        const seen = declarations.get(name);
        if (!seen) declarations.set(name, [property]);
        else if (!seen.some((other) => sameJson(other, property))) seen.push(property);
      }
      forms.push(
        Object.keys(branchProperties)
          .map((name) => `\`${name}\``)
          .join(", "),
      );
    }
    const required = resolved.required;
    const branchRequired = Array.isArray(required)
      ? required.filter((r) => typeof r === "string")
      : [];
    read += branchRequired.length;
    requiredSets.push(branchRequired);
    // A `$ref` left on a resolved branch points outside the schema: nothing to merge.
    for (const [name, value] of Object.entries(resolved)) {
      if (MERGED_APART.has(name)) continue;
      if (!Object.hasOwn(result, name)) setOwn(result, name, value);
      else if (joins(name, keyword) && Array.isArray(value) && Array.isArray(result[name])) {
        // Each branch's forms, not the first's alone: two `anyOf`s lost the second's fields.
        const joined = result[name] as unknown[];
        for (const list of keyword === "allOf" && name !== "allOf" ? [joined, value] : []) {
          if (listsRead.has(list)) continue;
          listsRead.add(list);
          const every = requiredByEvery(list, root, MAX_READ - read);
          joinedRequired.push(...every.names);
          read += every.read;
        }
        result[name] = [...new Set([...joined, ...value])];
        listsRead.add(result[name]);
        read += value.length;
      }
    }
    // `allOf`: a value must have every branch's type, so the types are those all branches allow.
    const branchTypes = typesOf(resolved);
    const types = typesOf(result);
    if (keyword === "allOf" && branchTypes && types) {
      const allowed = new Set(branchTypes);
      const common = types.filter((type) => allowed.has(type));
      if (common.length > 0) result.type = common.length === 1 ? common[0] : common;
    }
  }
  // Sets, not lists looked through for each name: a branch may require 100,000 (their square).
  const sets = keyword === "allOf" ? [] : requiredSets.map((set) => new Set(set));
  const required =
    keyword === "allOf"
      ? [...new Set([...own_, ...requiredSets.flat(), ...joinedRequired])]
      : [
          ...new Set([
            ...own_,
            ...(requiredSets[0] ?? []).filter((name) => sets.every((set) => set.has(name))),
          ]),
        ];
  // Declared differently by several branches: any of them (`allOf`: all of them).
  const combined = keyword === "allOf" ? "allOf" : "anyOf";
  for (const [name, all] of declarations) {
    setOwn(properties, name, all.length === 1 ? all[0] : { [combined]: all });
  }
  // Branches that declare no properties (a described `$ref` to a string) make no object.
  if (isPlainObject(schema.properties) || forms.length > 0) result.properties = properties;
  if (required.length > 0) result.required = required;
  else delete result.required;
  if (keyword !== "allOf" && forms.length > 1) {
    const list = forms.map((form, i) => `(${i + 1}) ${form || "no fields"}`).join("; ");
    result.description = noteOn(result.description, `Takes one of these sets of fields: ${list}.`);
  }
  return result;
}
