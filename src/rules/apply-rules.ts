/**
 * One tool's rule (tool-rules.ts) applied, both ways (docs/rules.md): to the
 * tool as a listing shows it (description, and the input schema without the
 * arguments the proxy sets), and to a call's arguments (aliases before the
 * schema's own coalescing; defaults and fixed values after repair, so the
 * model can neither leave out a default nor override a fixed value).
 */
import { foldKey } from "../args/coalesce";
import { isPlainObject, writtenAsIn, writtenAsSet } from "../json";
import { shapeRootForms } from "../schemas/root-forms";
import type { ToolRule, ToolRules } from "./tool-rules";

const has = (table: Record<string, unknown>, key: string) => Object.hasOwn(table, key);

/** The description the model sees: replaced, appended to, or the origin's. */
export function describedTool(
  description: unknown,
  rule: ToolRule | undefined,
): string | undefined {
  const base = rule?.description ?? (typeof description === "string" ? description : undefined);
  if (rule?.appendDescription === undefined) return base;
  return base ? `${base}\n\n${rule.appendDescription}` : rule.appendDescription;
}

/**
 * The descriptions `rules` give `tools`, by original, where a rule changes
 * one (`describedTool`); the rest keep their own.
 */
export function ruleDescriptions(
  tools: Iterable<{ original: string; tool?: { description?: unknown } }>,
  rules: Pick<ToolRules, "ruleFor">,
): Map<string, string | undefined> {
  const descriptions = new Map<string, string | undefined>();
  for (const { original, tool } of tools) {
    const rule = rules.ruleFor(original);
    if (rule?.description !== undefined || rule?.appendDescription !== undefined) {
      descriptions.set(original, describedTool(tool?.description, rule));
    }
  }
  return descriptions;
}

/** Whether the rule changes what the model is shown of the input schema. */
export const shapesSchema = (rule: ToolRule | undefined): rule is ToolRule =>
  rule !== undefined &&
  (Object.keys(rule.fixed).length > 0 || Object.keys(rule.defaults).length > 0);

/**
 * The input schema the model is shown: fixed arguments left out, and an
 * argument with a default no longer required, the default said in words. In
 * every form the arguments may take (schemas/root-forms.ts): the root with
 * its `$ref` and `allOf` merged in (Go's invopop/jsonschema writes every
 * input as a root `$ref`), and each `anyOf`/`oneOf` branch.
 */
export function presentedSchema(inputSchema: unknown, rule: ToolRule | undefined): unknown {
  if (!shapesSchema(rule) || !isPlainObject(inputSchema)) return inputSchema;
  return shapeRootForms(inputSchema, (form) => shapedForm(form, rule));
}

const DEFAULT_NOTE = "(the proxy sets it when left out)";

/** One form of the arguments (a copy) without the fixed ones, and the defaulted ones optional. */
function shapedForm(form: Record<string, unknown>, rule: ToolRule): Record<string, unknown> {
  const setByRule = (key: unknown) =>
    typeof key === "string" && (has(rule.fixed, key) || has(rule.defaults, key));
  if (isPlainObject(form.properties)) {
    const properties = Object.entries(form.properties).flatMap(([key, schema]) => {
      if (has(rule.fixed, key)) return [];
      if (!has(rule.defaults, key)) return [[key, schema]];
      const note = `Default: ${JSON.stringify(rule.defaults[key])} ${DEFAULT_NOTE}.`;
      if (schema === true) return [[key, { description: note }]];
      if (!isPlainObject(schema)) return [[key, schema]];
      const description =
        typeof schema.description === "string" ? `${schema.description} ${note}` : note;
      // Draft 3 says `required` in the property itself, which every view reads as required.
      const { required, ...rest } = schema;
      return [[key, { ...(required === true ? rest : schema), description }]];
    });
    // fromEntries: an argument named `__proto__` stays an ordinary key.
    form.properties = Object.fromEntries(properties);
  }
  if (Array.isArray(form.required)) form.required = form.required.filter((k) => !setByRule(k));
  // `a` present requires `b`: the proxy sets `b`, and the model sends no fixed `a`, which the
  // proxy always sends: what it requires, the model must. Draft-07 writes the lists in
  // `dependencies`, beside schemas (root-forms.ts shapes those).
  const always: string[] = [];
  for (const keyword of ["dependentRequired", "dependencies"]) {
    const map = form[keyword];
    if (!isPlainObject(map)) continue;
    const dependent = Object.entries(map).flatMap(([key, names]) => {
      if (!Array.isArray(names)) return [[key, names]];
      const left = names.filter((k) => !setByRule(k));
      if (!has(rule.fixed, key)) return [[key, left]];
      // One by one: spread as arguments, an origin's list of some 200,000 names overflowed the stack.
      for (const k of left) if (typeof k === "string") always.push(k);
      return [];
    });
    form[keyword] = Object.fromEntries(dependent);
  }
  if (always.length > 0) {
    const required = Array.isArray(form.required) ? form.required : [];
    form.required = [...new Set([...required, ...always])];
  }
  return form;
}

/** The operator's aliases, applied before the schema's coalescing: `alias` → its declared name. */
export function aliasedArguments(
  args: Record<string, unknown>,
  rule: ToolRule | undefined,
): { arguments: Record<string, unknown>; renamed: Array<{ from: string; to: string }> } {
  const aliases = rule?.aliases ?? {};
  const renamed: Array<{ from: string; to: string }> = [];
  const entries: Array<[string, unknown]> = [];
  for (const [key, value] of Object.entries(args)) {
    const target = has(aliases, key) ? aliases[key] : undefined;
    if (target === undefined || target === key) {
      entries.push([key, value]);
      continue;
    }
    // The declared name wins over its alias, unless it is null.
    if (has(args, target) && args[target] !== null) continue;
    renamed.push({ from: key, to: target });
    entries.push([target, value]);
  }
  if (renamed.length === 0 && entries.length === Object.keys(args).length) {
    return { arguments: args, renamed };
  }
  const merged = new Map<string, unknown>();
  for (const [key, value] of entries)
    if (!merged.has(key) || value !== null) merged.set(key, value);
  const aliasOf = new Map(renamed.map(({ from, to }) => [to, from]));
  const aliased = writtenAsIn(Object.fromEntries(merged), args, (key) => aliasOf.get(key) ?? key);
  return { arguments: aliased, renamed };
}

/**
 * Whether the rule replaces the model's value of an argument so named: one it
 * fixes, under any spelling the schema's alias matching folds to it
 * (`settledArguments`). What the model sent for it never reaches the origin.
 */
export function replacesArgument(rule: ToolRule): (argument: string) => boolean {
  const fixed = new Set(Object.keys(rule.fixed).map(foldKey));
  return (argument) => fixed.has(foldKey(argument));
}

/**
 * Defaults for what the model left out, then every fixed value, whatever the
 * model sent: under any spelling the schema's alias matching folds to a fixed
 * name (`invoiceId`, `INVOICE-ID`), which an origin may read as that name too,
 * the model's value is left out.
 */
export function settledArguments(
  args: Record<string, unknown>,
  rule: ToolRule | undefined,
): { arguments: Record<string, unknown>; set: string[]; dropped: string[] } {
  if (!rule) return { arguments: args, set: [], dropped: [] };
  const set: string[] = [];
  const dropped: string[] = [];
  const result = new Map(Object.entries(args));
  for (const [key, value] of Object.entries(rule.defaults)) {
    if (result.has(key) && result.get(key) !== null) continue;
    result.set(key, value);
    set.push(key);
  }
  const replaced = replacesArgument(rule);
  for (const key of result.keys()) {
    if (has(rule.fixed, key) || !replaced(key)) continue;
    result.delete(key);
    dropped.push(key);
  }
  for (const [key, value] of Object.entries(rule.fixed)) {
    result.set(key, value);
    set.push(key);
  }
  if (set.length === 0) return { arguments: args, set, dropped };
  const settled = Object.fromEntries(result);
  for (const key of set) writtenAsSet(settled, key);
  return { arguments: writtenAsIn(settled, args), set, dropped };
}
