/**
 * The forms a tool's arguments may take, as one schema: the root with its
 * `$ref` and `allOf` merged in (merge-branches.ts, as passes/root-object.ts
 * merges them), and each `anyOf`/`oneOf` branch (and `then`/`else`, and what
 * applies where a property is given: `dependentSchemas`) likewise,
 * each form handed to `shape`. For what must hold of every form whatever the
 * profile, `mcp` included: the operator's fixed arguments appear in none
 * (rules/apply-rules.ts). A `$def` only the merged `$ref`s pointed at goes
 * with them, so what was merged is said once.
 *
 * Pure; bounded by `MAX_MERGES` rounds per form and as many levels of
 * branches, `MAX_FORMS` forms and `MAX_SHAPED` characters in all (the forms
 * past them left out), and `MAX_NODES` nodes read looking for what still
 * refers to a `$def`. Never mutates its input.
 */
import { MAX_REF_HOPS, refTarget, type Schema } from "../args/schema-reading";
import { isPlainObject, setOwn } from "../json";
import { MAX_MERGES, mergeBranches } from "./merge-branches";
import { CHARS_PER_NODE, MAX_NODES } from "./pass";
import { textLength } from "./walk";

/** Forms shaped at most: past it, the forms left are left out. */
const MAX_FORMS = 1_000;

/**
 * Characters the shaped forms write together (about as many as `MAX_NODES` nodes of a view):
 * past them, the forms left are left out. Each form may be a `$ref` to one large definition,
 * merged and shaped again for each: 1,000 of them to 1,000 properties took 1.8 s of CPU and
 * shaped a million, to an enum of 1,000 objects made a schema of 38 KB one of 15 MB, listed
 * as it is at `/mcp`.
 */
const MAX_SHAPED = MAX_NODES * CHARS_PER_NODE;

/** Keywords whose schemas are other forms of the same arguments. */
const BRANCHES = ["anyOf", "oneOf"] as const;
const CONDITIONAL = ["then", "else"] as const;
/** Keywords whose schemas apply where a property is given (draft-07's `dependencies` too). */
const DEPENDENT = ["dependentSchemas", "dependencies"] as const;

/**
 * What the `$ref`s from `branch` say beside them, one after another, where they lead back to the
 * root; `undefined` where they lead elsewhere.
 */
function besideToRoot(branch: unknown, root: Schema): Schema[] | undefined {
  const beside: Schema[] = [];
  let current = branch;
  for (let hop = 0; hop <= MAX_REF_HOPS; hop++) {
    if (current === root) return beside;
    if (!isPlainObject(current)) return undefined;
    const ref = current.$ref;
    if (typeof ref !== "string" || !ref.startsWith("#")) return undefined;
    const { $ref: _, ...rest } = current;
    if (Object.keys(rest).length > 0) beside.push(rest);
    current = refTarget(ref, root);
  }
  return undefined;
}

/** `form` with its local `$ref` and `allOf` merged in; the `$ref`s merged go into `merged`. */
function mergedForm(form: Schema, root: Schema, merged: Set<string>): Schema {
  let result = form;
  let toRoot = false;
  for (let round = 0; round < MAX_MERGES; round++) {
    const ref = result.$ref;
    // A `$ref` that resolves to nothing, or back to the root, adds nothing: it stays as it was.
    if (typeof ref === "string" && ref.startsWith("#")) {
      const target = refTarget(ref, root);
      if (isPlainObject(target) && target !== root) {
        const { $ref: _, ...rest } = result;
        result = {
          ...rest,
          allOf: [{ $ref: ref }, ...(Array.isArray(rest.allOf) ? rest.allOf : [])],
        };
        merged.add(ref);
      }
    }
    if (!Array.isArray(result.allOf)) break;
    // A branch that is the root again, directly or through other `$ref`s, adds nothing to a form
    // of it but what they say beside them: that is merged (and shaped), a `$ref` to the root
    // kept. Merged whole, it brought the root's `allOf` back, its own unshaped branch with it,
    // round after round; kept, a `$ref` on the way was a form listed as the origin wrote it.
    const branches: unknown[] = [];
    for (const branch of result.allOf) {
      const beside = besideToRoot(branch, root);
      if (beside === undefined) branches.push(branch);
      else {
        toRoot = true;
        branches.push(...beside);
      }
    }
    result = mergeBranches(result, "allOf", branches, root);
  }
  if (!toRoot) return result;
  return {
    ...result,
    allOf: [...(Array.isArray(result.allOf) ? result.allOf : []), { $ref: "#" }],
  };
}

/** What one shaping has done: the `$ref`s it merged, the forms it has shaped and their text. */
interface Shaping {
  root: Schema;
  shape: (form: Schema) => Schema;
  merged: Set<string>;
  forms: number;
  shaped: number;
}

const spent = (shaping: Shaping) => shaping.forms >= MAX_FORMS || shaping.shaped >= MAX_SHAPED;

/**
 * `form`, shaped, and its branches in turn. A form past the bounds (`MAX_MERGES` levels of
 * branches, `MAX_FORMS`, `MAX_SHAPED`) is left out, never listed as the origin wrote it: it
 * would offer the model what the operator's rules take away.
 */
function eachForm(form: Schema, shaping: Shaping, depth: number): Schema {
  const result = shaping.shape(mergedForm(form, shaping.root, shaping.merged));
  shaping.forms++;
  shaping.shaped += textLength(result, MAX_SHAPED);
  const branch = (schema: unknown) =>
    !isPlainObject(schema)
      ? [schema]
      : depth >= MAX_MERGES || spent(shaping)
        ? []
        : [eachForm(schema, shaping, depth + 1)];
  for (const keyword of BRANCHES) {
    const list = result[keyword];
    if (!Array.isArray(list)) continue;
    const forms = list.flatMap(branch);
    // Every form left out: the rest take the arguments in any form.
    if (forms.length > 0 || list.length === 0) result[keyword] = forms;
    else delete result[keyword];
  }
  for (const keyword of CONDITIONAL) {
    if (!isPlainObject(result[keyword])) continue;
    const [shaped] = branch(result[keyword]);
    if (shaped === undefined) delete result[keyword];
    else result[keyword] = shaped;
  }
  for (const keyword of DEPENDENT) {
    const map = result[keyword];
    if (!isPlainObject(map)) continue;
    // A list of names (draft-07's `dependencies`) is the form's own, shaped with it.
    const forms = Object.entries(map).flatMap(([name, schema]) =>
      isPlainObject(schema) ? branch(schema).map((form) => [name, form]) : [[name, schema]],
    );
    // fromEntries: a property named `__proto__` stays an ordinary key.
    result[keyword] = Object.fromEntries(forms);
  }
  return result;
}

/**
 * Every `$ref` string in `schema`, under any keyword (`dependentSchemas`, `propertyNames` and
 * keywords no draft names hold schemas too); `undefined` past `MAX_NODES` nodes.
 */
function refsIn(schema: unknown): Set<string> | undefined {
  const refs = new Set<string>();
  const pending = [schema];
  let nodes = 0;
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (++nodes > MAX_NODES) return undefined;
    if (Array.isArray(node)) {
      for (const item of node) if (typeof item === "object" && item !== null) pending.push(item);
    }
    if (!isPlainObject(node)) continue;
    if (typeof node.$ref === "string") refs.add(node.$ref);
    for (const keyword in node) {
      const value = node[keyword];
      if (Object.hasOwn(node, keyword) && typeof value === "object" && value !== null)
        pending.push(value);
    }
  }
  return refs;
}

/** `#/$defs/Name` or `#/definitions/Name`, a name no pointer escape can spell another way. */
const PLAIN_DEF = /^#\/(\$defs|definitions)\/([A-Za-z0-9_.-]+)$/;

/**
 * `schema` without the `$def`s the merged `$ref`s pointed at, where nothing
 * left in it can refer to them (a pointer into one, another spelling, an
 * anchor or id inside it): each stays otherwise.
 */
function withoutMergedDefs(schema: Schema, merged: ReadonlySet<string>): Schema {
  const plain = [...merged].flatMap((ref) => {
    const match = PLAIN_DEF.exec(ref);
    return match ? [[ref, match[1] as string, match[2] as string] as const] : [];
  });
  if (plain.length === 0) return schema;
  const refs = refsIn(schema);
  if (refs === undefined) return schema;
  const result = { ...schema };
  for (const [ref, keyword, name] of plain) {
    const defs = result[keyword];
    if (!isPlainObject(defs) || !Object.hasOwn(defs, name)) continue;
    const mentioned = [...refs].some((other) => other.includes(name) || other.includes("%"));
    const addressed = /"\$(?:id|anchor|dynamicAnchor)"/.test(JSON.stringify(defs[name]) ?? "");
    if (mentioned || addressed || refs.has(ref)) continue;
    const kept: Schema = {};
    for (const key of Object.keys(defs)) if (key !== name) setOwn(kept, key, defs[key]);
    if (Object.keys(kept).length > 0) result[keyword] = kept;
    else delete result[keyword];
  }
  return result;
}

/**
 * `schema` with each form of its arguments shaped: the root (its `$ref` and
 * `allOf` merged in), then each `anyOf`/`oneOf` branch, `then`/`else` and
 * `dependentSchemas` schema, merged the same way. `shape` is given copies it may change.
 */
export function shapeRootForms(schema: Schema, shape: (form: Schema) => Schema): Schema {
  const shaping: Shaping = {
    root: schema,
    shape: (form) => shape({ ...form }),
    merged: new Set(),
    forms: 0,
    shaped: 0,
  };
  return withoutMergedDefs(eachForm(schema, shaping, 0), shaping.merged);
}
