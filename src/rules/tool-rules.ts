/**
 * The operator's rules for a tenant's tools (`TOOL_RULES`, docs/rules.md):
 * which tools the model sees, under which names, described how, and with
 * which arguments set for it. Rules address tools by their original names,
 * with picomatch globs or `exact:` names (globs.ts). The shape is public configuration operators write by
 * hand and keep across upgrades: extend it, never rename it.
 *
 * Pure: the setting's schema (valibot), and the rules compiled from it.
 */
import * as v from "valibot";
import { foldKey } from "../args/coalesce";
import {
  holdsNumber,
  isPlainObject,
  jsonSyntaxError,
  keyReadTwice,
  MAX_NESTING,
  quotedName,
  readsExactly,
  withoutBom,
} from "../json";
import type { NameRules } from "../names/profiles";
import { isLegalName } from "../names/sanitize";
import { HINTS } from "../protocol/tool-shape";
import { globs, matcher } from "./globs";

/**
 * Keys valibot's `record` leaves out of what it reads (against prototype pollution): a rule for a
 * tool so named, or a fixed argument so named, would be dropped without a word.
 */
const UNREAD_KEYS = ["__proto__", "constructor", "prototype"];
const unreadKeyOf = (table: unknown) =>
  isPlainObject(table) ? UNREAD_KEYS.find((key) => Object.hasOwn(table, key)) : undefined;

/** A TOML table (a JSON object, never an array) of `values`. */
const table = <T extends v.GenericSchema>(values: T, message: string) =>
  v.pipe(
    v.custom<Record<string, unknown>>(isPlainObject, message),
    v.check(
      (read) => unreadKeyOf(read) === undefined,
      ({ input }) => {
        const key = unreadKeyOf(input);
        const others = UNREAD_KEYS.filter((other) => other !== key).map((other) => `"${other}"`);
        return `names "${key}", which no rule can be written for (nor ${others.join(" or ")})`;
      },
    ),
    v.record(v.string(), values, message),
  );

/** MCP's tool annotations (`ToolAnnotations`): its title, and its hints (protocol/tool-shape.ts), booleans. */
const ANNOTATIONS = ["title", ...HINTS];

/**
 * What is wrong with an annotation a rule matches, as MCP writes it: a hint
 * that is no boolean, or a name spelled as another reads one of MCP's
 * (`destructivehint`, `read_only_hint`), matches no tool, and the rule would
 * be off without a word. Other annotations are an origin's own.
 */
function annotationProblem(key: string, value: unknown): string | undefined {
  if (HINTS.includes(key)) {
    return typeof value === "boolean"
      ? undefined
      : "must be true or false: MCP's hints are booleans";
  }
  if (ANNOTATIONS.includes(key)) return undefined;
  const meant = ANNOTATIONS.find((name) => foldKey(name) === foldKey(key));
  return meant && `is not spelled as MCP names the annotation: write ${meant}`;
}

/**
 * Annotation → the value that matches (`{ destructiveHint = true }`). An
 * empty table would match every tool: `hideAnnotated = {}`, copied as a
 * placeholder, would hide them all without a word.
 */
const annotationMatch = v.optional(
  v.pipe(
    table(
      v.union([v.boolean(), v.string(), v.number()], "must be true, false, a string or a number"),
      "must be a table of annotations and values",
    ),
    v.check(
      (wanted) => Object.keys(wanted).length > 0,
      "must name at least one annotation: an empty table matches every tool (leave the rule out instead)",
    ),
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      const input = dataset.value;
      for (const [key, value] of Object.entries(input)) {
        const message = annotationProblem(key, value);
        if (message) {
          addIssue({ message, path: [{ type: "object", origin: "value", input, key, value }] });
        }
      }
    }),
  ),
);

const argumentValues = (what: string) =>
  v.optional(table(v.unknown(), `must be a table of ${what}`), {});

/** A strict object of `entries`, whose unknown key is told with the keys it takes. */
const rulesOf = <T extends v.ObjectEntries>(entries: T, what: string) =>
  v.strictObject(entries, `is not ${what} (${Object.keys(entries).join(", ")})`);

const ToolRuleSchema = rulesOf(
  {
    name: v.optional(v.pipe(v.string("must be a string"), v.nonEmpty("must not be empty"))),
    description: v.optional(v.string("must be a string")),
    appendDescription: v.optional(v.string("must be a string")),
    aliases: v.optional(
      table(
        v.pipe(v.string("must be the declared name (a string)"), v.nonEmpty("must not be empty")),
        "must be a table of alias = declared name",
      ),
      {},
    ),
    fixed: argumentValues("argument = value"),
    defaults: argumentValues("argument = value"),
  },
  "a rule for a tool",
);

const RulesDocument = rulesOf(
  {
    hide: globs,
    only: globs,
    hideAnnotated: annotationMatch,
    onlyAnnotated: annotationMatch,
    tools: v.optional(table(ToolRuleSchema, "must be a table of tools by original name"), {}),
  },
  "a rule",
);

const NOT_A_TABLE = "must be a table, or JSON text holding one";
const ROUNDED =
  "holds a number that is not kept exactly (more digits than a double keeps, or past a double's range): the origin would get another; write it as a string if the tool takes one";

/** `TOOL_RULES` as a table, before its rules are read: a table (TOML), or JSON text holding one. */
const RulesTable = v.pipe(
  v.unknown(),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    let value = dataset.value;
    if (typeof value === "string") {
      const text = withoutBom(value);
      // Where it failed, never the parser's message, which may quote the text.
      const error = jsonSyntaxError(text);
      if (error) {
        addIssue({
          message: `is not valid JSON: at line ${error.line}, column ${error.column}, expected ${error.expected}`,
        });
        return NEVER;
      }
      // JSON.parse keeps a key's last value: the first (a `hide`, a tool's `fixed`) would be
      // dropped without a word, where TOML refuses a table that writes a key twice.
      const twice = keyReadTwice(text, 0, (key) => key);
      if (twice !== undefined) {
        addIssue({
          message:
            twice === null
              ? `nests deeper than ${MAX_NESTING} levels`
              : `writes the key ${quotedName(twice)} twice in one object: write each key once`,
        });
        return NEVER;
      }
      let rounded = false;
      try {
        value = JSON.parse(text, (_key, item, context?: { source?: string }) => {
          // A rounded `fixed` id would select another record (wrangler refuses one in TOML).
          if (typeof item === "number" && !readsExactly(context?.source, item)) rounded = true;
          return item;
        });
      } catch {
        addIssue({ message: NOT_A_TABLE });
        return NEVER;
      }
      if (rounded) {
        addIssue({ message: ROUNDED });
        return NEVER;
      }
    }
    if (!isPlainObject(value)) {
      addIssue({ message: NOT_A_TABLE });
      return NEVER;
    }
    // A TOML float past a double's range, which wrangler reads as Infinity and sends as null.
    if (holdsNumber(value, (number) => !Number.isFinite(number))) {
      addIssue({ message: ROUNDED });
      return NEVER;
    }
    return value;
  }),
);

/** `TOOL_RULES`: a table (TOML), or JSON text holding one (`wrangler dev --var`). */
export const ToolRulesSetting = v.optional(v.pipe(RulesTable, RulesDocument));

/**
 * The rules for the tools of `value` (`TOOL_RULES` as written) each of which is right on its
 * own, whatever is wrong elsewhere in it: what the checks across rules (`ruleNamesProblems`)
 * read, so that a mistake in one rule hides none in another. `undefined` where no table of
 * tools can be read.
 */
export function toolRulesOnTheirOwn(value: unknown): ToolRules | undefined {
  const read = v.safeParse(RulesTable, value);
  const tools = read.success && isPlainObject(read.output) ? read.output.tools : undefined;
  if (!isPlainObject(tools) || unreadKeyOf(tools) !== undefined) return undefined;
  const sound = Object.entries(tools).flatMap(([original, rule]) => {
    const parsed = v.safeParse(ToolRuleSchema, rule);
    return parsed.success ? [[original, parsed.output] as const] : [];
  });
  return new ToolRules({ hide: [], only: [], tools: Object.fromEntries(sound) });
}

export type ToolRulesDocument = v.InferOutput<typeof RulesDocument>;
export type ToolRule = v.InferOutput<typeof ToolRuleSchema>;

/** `TOOL_CHANGES`: what a tool whose definition changed since it was pinned does. */
export const CHANGE_MODES = ["allow", "log", "hold"] as const;
export type ChangeMode = (typeof CHANGE_MODES)[number];
/** What a definition pin covers (`TOOL_CHANGES_SCOPE`): the whole definition, or the input schema alone. */
export const CHANGE_SCOPES = ["definition", "schema"] as const;
export type ChangeScope = (typeof CHANGE_SCOPES)[number];

/** A tool as the rules see it: its original name and its annotations. */
export interface RuledTool {
  name: string;
  annotations?: unknown;
}

const matches = (wanted: Record<string, unknown> | undefined, annotations: unknown) =>
  wanted !== undefined &&
  Object.entries(wanted).every(
    ([key, value]) => isPlainObject(annotations) && annotations[key] === value,
  );

/**
 * Whether `annotations` says `key` other than as MCP writes it: annotations that are no object,
 * or a hint that is no boolean (`"true"`, `1`). Absent, or `null` as Go writes one unset, it says
 * nothing. The listing shows the tool without it (protocol/tool-shape.ts), so no model reads it.
 */
function misshapen(annotations: unknown, key: string): boolean {
  if (annotations === undefined || annotations === null) return false;
  if (!isPlainObject(annotations)) return true;
  const value = annotations[key];
  return HINTS.includes(key) && value !== undefined && value !== null && typeof value !== "boolean";
}

/**
 * Whether `hideAnnotated`'s values may be the tool's: each matches, or is said misshapen. A rule
 * that a hint the origin wrote otherwise would decide hides the tool rather than guess what it
 * meant (`"true"`): hiding is the operator's safe side. (`onlyAnnotated` lists no such tool as
 * it is: a misshapen hint matches no value.)
 */
const mayMatch = (wanted: Record<string, unknown>, annotations: unknown) =>
  Object.entries(wanted).every(
    ([key, value]) =>
      misshapen(annotations, key) || (isPlainObject(annotations) && annotations[key] === value),
  );

/** The rules, compiled once per configuration. */
export class ToolRules {
  private readonly hidden: (name: string) => boolean;
  private readonly listedOnly: ((name: string) => boolean) | undefined;
  /** Original → the model-facing name the operator chose. */
  readonly names: ReadonlyMap<string, string>;
  /** Original → its rule: a listing looks up each of its tools, most of them with none. */
  private readonly rules: ReadonlyMap<string, ToolRule>;

  constructor(readonly document: ToolRulesDocument) {
    this.hidden = document.hide.length > 0 ? matcher(document.hide, true) : () => false;
    this.listedOnly = document.only.length > 0 ? matcher(document.only, false) : undefined;
    this.rules = new Map(Object.entries(document.tools));
    this.names = new Map(
      [...this.rules].flatMap(([original, rule]) =>
        rule.name === undefined ? [] : [[original, rule.name] as const],
      ),
    );
  }

  /** Whether the operator's rules leave the tool out of listings (and refuse calls to it). */
  hides(tool: RuledTool): boolean {
    const { hideAnnotated, onlyAnnotated } = this.document;
    if (this.hidden(tool.name)) return true;
    if (this.listedOnly && !this.listedOnly(tool.name)) return true;
    // Annotations read only where a rule names them: a tool read from a listing's text parses them then.
    if (hideAnnotated !== undefined && mayMatch(hideAnnotated, tool.annotations)) return true;
    return onlyAnnotated !== undefined && !matches(onlyAnnotated, tool.annotations);
  }

  /** The rule for one original, if the operator wrote one. */
  ruleFor(original: string): ToolRule | undefined {
    return this.rules.size === 0 ? undefined : this.rules.get(original);
  }
}

export const NO_RULES = new ToolRules({ hide: [], only: [], tools: {} });

/** The operator's say over a tenant's tools: the rules, and what a changed definition does. */
export interface ToolPolicy {
  rules: ToolRules;
  changes: ChangeMode;
  /** What pins cover; the whole definition unless said. */
  scope?: ChangeScope;
  /**
   * `WRANGLER_ENV`: the tenant's `[env.NAME]`, which the command that accepts
   * a held change names; `undefined` for local development.
   */
  environment?: string | undefined;
}

export const NO_POLICY: ToolPolicy = { rules: NO_RULES, changes: "allow" };

/** Whether the policy may leave out a tool the origin lists: it hides tools, or holds changed ones. */
function hidesOrHolds({ rules, changes }: ToolPolicy): boolean {
  const { hide, only, hideAnnotated, onlyAnnotated } = rules.document;
  return (
    changes === "hold" ||
    hide.length > 0 ||
    only.length > 0 ||
    hideAnnotated !== undefined ||
    onlyAnnotated !== undefined
  );
}

/**
 * Whether a call goes on only for a tool the origin lists, named as it lists
 * it: the policy refuses calls to some (hidden, held), or fixes arguments. An
 * origin that looks a name up leniently (in any case, up to a NUL, with `_`
 * for `:`) would take another spelling for the tool, and run a refused tool,
 * or one without the arguments the operator fixed.
 */
export function refusesCalls(policy: ToolPolicy): boolean {
  return (
    hidesOrHolds(policy) ||
    Object.values(policy.rules.document.tools).some((rule) => Object.keys(rule.fixed).length > 0)
  );
}

/**
 * Whether the policy may take a tool out of a listing or write its
 * description anew: then a listing the proxy cannot read is not passed on
 * as it came (it would show what the operator left out).
 */
export function editsListings(policy: ToolPolicy): boolean {
  return (
    hidesOrHolds(policy) ||
    Object.values(policy.rules.document.tools).some(
      (rule) => rule.description !== undefined || rule.appendDescription !== undefined,
    )
  );
}

/**
 * What is wrong with the operator's names, checked at startup: each must be
 * legal under every profile (with `NAME_MAX_LENGTH`), and no two alike; and no
 * argument both fixed and defaulted. `[path, problem]` for every mistake.
 */
export function ruleNamesProblems(
  rules: ToolRules,
  profiles: readonly NameRules[],
): Array<[Array<string>, string]> {
  const problems: Array<[Array<string>, string]> = [];
  const owners = new Map<string, string>();
  for (const [original, name] of rules.names) {
    const path = ["tools", original, "name"];
    const refusing = profiles.find((profile) => !isLegalName(name, profile));
    const other = owners.get(name);
    if (refusing) {
      problems.push([
        path,
        `"${name}" is not a legal tool name under the ${refusing.profile.name} profile (every profile is served): use letters, digits and _, starting with a letter, at most ${Math.min(...profiles.map((p) => p.cap))} characters`,
      ]);
    } else if (other !== undefined) {
      problems.push([path, `"${name}" is already the name of ${other}`]);
    } else owners.set(name, original);
  }
  for (const [original, rule] of Object.entries(rules.document.tools)) {
    for (const both of Object.keys(rule.defaults).filter((key) => Object.hasOwn(rule.fixed, key))) {
      problems.push([
        ["tools", original, "defaults", both],
        "is also fixed: a fixed value is always sent",
      ]);
    }
  }
  return problems;
}
