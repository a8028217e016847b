/**
 * One object schema from the branches of a composition: the union of their
 * properties; for `allOf` every branch's required fields (and, given a
 * `FormProduct`, the forms of its branches' `anyOf`s and `oneOf`s in
 * combinations), for `anyOf` and `oneOf` those every branch requires, the
 * forms spelled out in words. Used at the root (passes/root-object.ts) and
 * for `allOf` (passes/all-of.ts).
 */
import { jsonTypeOf } from "../args/json-schema";
import { MAX_REF_HOPS, refTarget, resolve, type Schema } from "../args/schema-reading";
import { isPlainObject, own, sameJson, setOwn } from "../json";
import { commonTypes, isNullSchema, TYPES, typesOf } from "./keywords";
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
 * (`anyOf`, `oneOf`) in a merge that does not combine them (`FormProduct`), the model then
 * offered each branch's (what holds of both together, validation against the origin's schema
 * checks), and an `allOf`'s in an `allOf`.
 */
const joins = (name: string, keyword: string) =>
  name === "anyOf" || name === "oneOf" || (name === "allOf" && keyword === "allOf");

/**
 * Combinations an `allOf` merge may offer of the forms of its lists (`anyOf`s, `oneOf`s) that
 * must all hold (`FormProduct`): two lists of four forms each. Each combination is a form of the
 * view, and an `anyOf` of more than a few is more than a model reads (or the way back fits a
 * value to, way-back.ts).
 */
export const MAX_FORMS = 16;

/**
 * How an `allOf` merge offers the forms of lists that must all hold (`{"allOf": [{"anyOf": [A,
 * B]}, {"anyOf": [C, D]}]}`): a form for each way of taking one of each list (A and C, A and D,
 * B and C, B and D), within `room` combinations (`MAX_FORMS`) for the whole merge; past it,
 * `over`, and the lists' forms offered together, which take values the `allOf` does not (the
 * caller asks for the value as text instead, passes/all-of.ts). Without one, a merge offers them
 * together (the root's: its forms become one object, passes/root-object.ts).
 */
export interface FormProduct {
  room: number;
  over: boolean;
  /** Each form offered in more than one combination, and how many times more. */
  repeated: Array<[form: unknown, times: number]>;
}

const FORM_LISTS = new Set(["anyOf", "oneOf"]);

/**
 * The types a value of `form` may have, by its `type` (OpenAPI's `nullable` too), its `const` or
 * its `enum`; `undefined`: any.
 */
function typesOfForm(form: Schema): string[] | undefined {
  if (isNullSchema(form)) return ["null"];
  const named = typesOf(form);
  if (named !== undefined) {
    if (!named.every((type) => TYPES.includes(type))) return undefined;
    return form.nullable === true ? [...named, "null"] : named;
  }
  if (Object.hasOwn(form, "const")) return [jsonTypeOf(form.const)];
  return Array.isArray(form.enum) ? [...new Set(form.enum.map(jsonTypeOf))] : undefined;
}

/** The types a value of every form of `forms` may have (none: no value is); `undefined`: any. */
function typesOfAll(forms: readonly unknown[], root: Schema): string[] | undefined {
  let met: string[] | undefined;
  for (const form of forms) {
    const target = resolve(form, root);
    const types = target === undefined ? undefined : typesOfForm(target);
    if (types === undefined) continue;
    met = met === undefined ? types : commonTypes(met, types);
    if (met.length === 0) break;
  }
  return met;
}

/**
 * The forms of a value that matches a form of each of `lists`: one per combination, an `allOf`
 * of its forms (merged when the view reaches it, passes/all-of.ts, its `$ref`s within that
 * pass's bounds) typed with the types its forms share. A combination of forms no value meets
 * (a string and an object) is left out, unless every one is: then none is a value the origin
 * takes, and leaving them all says as much as leaving none. `undefined` past `product.room`.
 */
function formsOfAll(lists: unknown[][], root: Schema, product: FormProduct): unknown[] | undefined {
  let count = 1;
  for (const list of lists) count *= list.length;
  if (count > product.room) {
    product.over = true;
    return undefined;
  }
  product.room -= count;
  for (const list of lists) {
    const times = count / list.length - 1;
    if (times > 0) for (const form of list) product.repeated.push([form, times]);
  }
  let combinations: unknown[][] = [[]];
  for (const list of lists)
    combinations = combinations.flatMap((taken) => list.map((form) => [...taken, form]));
  const forms: Schema[] = [];
  for (const combination of combinations) {
    const types = typesOfAll(combination, root);
    if (types?.length === 0) continue;
    const type = types === undefined ? {} : { type: types.length === 1 ? types[0] : types };
    forms.push({ ...type, allOf: combination });
  }
  return forms.length > 0 ? forms : combinations.map((combination) => ({ allOf: combination }));
}

/** Keywords of a branch not copied as they are: merged above, or meaning nothing here. */
const MERGED_APART = new Set(["properties", "required", "$ref"]);

/**
 * What one branch says: its `$ref`'s target and, from 2019-09 on, what it
 * says beside the `$ref` (`{"$ref": "#/$defs/Base", "properties": {…}}`),
 * both of which apply; at each hop of a chain of `$ref`s, as a target may
 * say more beside a `$ref` of its own. Without them, a view left those
 * properties out.
 */
function branchSchema(
  branch: unknown,
  root: Schema,
  product: FormProduct | undefined,
  hops = 0,
): Schema | undefined {
  if (!isPlainObject(branch)) return undefined;
  const ref = own(branch, "$ref");
  if (typeof ref !== "string" || !ref.startsWith("#")) return branch;
  if (hops >= MAX_REF_HOPS) return undefined;
  const target = branchSchema(refTarget(ref, root), root, product, hops + 1);
  const { $ref: _, ...beside } = branch;
  if (Object.keys(beside).length === 0) return target;
  if (!target) return beside;
  // An `allOf` beside the `$ref` is the branch's own, kept for the merge's next round (merged
  // here, a branch `$ref` in it began its chain anew, without end): as the schema of this merge,
  // its `allOf` would be left out.
  const { allOf, ...rest } = beside;
  const merged = mergeBranches(rest, "allOf", [target], root, product);
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
  product?: FormProduct,
): Schema {
  const result: Schema = { ...schema };
  delete result[keyword];
  // The lists of forms that must all hold, the schema's own among them, where they are combined.
  let lists: Array<[string, unknown[]]> | undefined;
  if (keyword === "allOf" && product !== undefined) {
    lists = [];
    for (const name of FORM_LISTS) {
      const list = result[name];
      if (!Array.isArray(list)) continue;
      lists.push([name, list]);
      delete result[name];
    }
  }
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
    const resolved = branchSchema(branch, root, product);
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
      if (lists !== undefined && FORM_LISTS.has(name)) {
        if (Array.isArray(value)) lists.push([name, value]);
        continue;
      }
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
      const common = commonTypes(types, branchTypes);
      if (common.length > 0) result.type = common.length === 1 ? common[0] : common;
    }
  }
  if (lists !== undefined) placeForms(result, lists, root, product as FormProduct);
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

/**
 * The forms of `lists` (each a keyword and its forms) into `result`: one list as it was, several
 * as the forms of all of them at once (`formsOfAll`), or, past `product`'s room, together.
 * An empty list is no schema (passes/well-formed.ts): it is left out.
 */
function placeForms(
  result: Schema,
  lists: Array<[string, unknown[]]>,
  root: Schema,
  product: FormProduct,
) {
  const given = lists.filter(([, forms]) => forms.length > 0);
  const [first] = given;
  if (first === undefined) return;
  if (given.length === 1) {
    setOwn(result, first[0], first[1]);
    return;
  }
  const forms = given.map(([, list]) => list);
  result.anyOf = formsOfAll(forms, root, product) ?? [...new Set(forms.flat())];
}
