/**
 * The values a schema names for a place (its `enum`, `const`, or the
 * forms' together), as argument repair reads them (repair.ts: a string that
 * stands for a number or a member in another case), within a budget one
 * call's repair shares: an origin's schema may name one long `enum` from
 * many places.
 */
import { own } from "../json";
import { formsTogether, type JsonType, NO_FORMS, typesIn } from "./json-schema";
import {
  branchesOf,
  type Reading,
  type RefTargets,
  readingOf,
  resolvedIn,
  type Schema,
} from "./schema-reading";

/**
 * The values a schema's `enum` or `const` names (or its `anyOf`/`oneOf` branches' together, where
 * each names some; or else an `allOf` branch's, which holds of the value too), or `undefined`
 * where it may take any value of its types. What it names may be more than it takes, never less.
 * With `of`, the values of that type may be: a branch whose types exclude it names none
 * (`Literal["asc","desc"] | None`, an `anyOf` of the enum and `null`, names `"asc"` and `"desc"`
 * of a string).
 */
export function namedValues(
  schema: unknown,
  root: Schema,
  targets?: RefTargets,
  of?: JsonType,
  budget: ValuesBudget = valuesBudget(),
): ReadonlySet<unknown> | undefined {
  return valuesIn(schema, readingOf(root, targets), of, budget);
}

/**
 * What `namedValues` may read for one reader (args/repair.ts: one call's repair, every value of
 * it): `members`, how many more `enum` members and forms' values it may gather, and each `enum`
 * gathered once. An origin's schema may name one long `enum` from many places, each through a
 * form of its own (`{"anyOf":[{"$ref":…}]}`): gathered anew at each, 200 properties of one
 * 10,000 made one call fold 2 million members. Past the bound a schema names nothing known (it
 * may take any value of its types), which repairs nothing; `spent` says a read was so cut.
 */
export interface ValuesBudget {
  members: number;
  spent: boolean;
  readonly enums: WeakMap<readonly unknown[], ReadonlySet<unknown>>;
}

/** The members one call's repair may gather: ten times a long real `enum` (time zones, ~600). */
export const MAX_VALUES_READ = 100_000;

export const valuesBudget = (members = MAX_VALUES_READ): ValuesBudget => ({
  members,
  spent: false,
  enums: new WeakMap(),
});

/** Whether `budget` allows gathering `count` more values, spent if so. */
function spend(budget: ValuesBudget, count: number): boolean {
  if (count > budget.members) {
    budget.spent = true;
    return false;
  }
  budget.members -= count;
  return true;
}

function valuesIn(
  schema: unknown,
  reading: Reading,
  of: JsonType | undefined,
  budget: ValuesBudget,
): ReadonlySet<unknown> | undefined {
  const resolved = resolvedIn(schema, reading);
  if (!resolved) return undefined;
  if (Object.hasOwn(resolved, "const")) return new Set([resolved.const]);
  const values = own(resolved, "enum");
  if (Array.isArray(values)) {
    const known = budget.enums.get(values);
    if (known !== undefined || !spend(budget, values.length)) return known;
    const read = new Set(values);
    budget.enums.set(values, read);
    return read;
  }
  const forms = formsTogether(resolved, reading, (form, next) => {
    const types = of === undefined ? undefined : typesIn(form, next);
    if (types && !types.has(of as JsonType)) return new Set();
    const said = valuesIn(form, next, of, budget);
    // Gathered into this schema's values one by one: as many more read.
    return said && spend(budget, said.size) ? said : undefined;
  });
  if (forms !== NO_FORMS) return forms;
  for (const branchValues of branchesOf(resolved, "allOf", reading, (branch, next) =>
    valuesIn(branch, next, of, budget),
  )) {
    if (branchValues) return branchValues;
  }
  return undefined;
}
