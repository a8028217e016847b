/**
 * The operator's rules for a tenant's tools (`TOOL_RULES`, docs/rules.md):
 * which tools the model sees, under which names, described how, and with
 * which arguments set for it. Rules address tools by their original names,
 * with picomatch globs or `exact:` names. The shape is public configuration operators write by
 * hand and keep across upgrades: extend it, never rename it.
 *
 * Pure: the setting's schema (valibot), and the rules compiled from it.
 */
import picomatch from "picomatch/posix";
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

const RULE_KEYS = "hide, only, hideAnnotated, onlyAnnotated, tools";
const TOOL_RULE_KEYS = "name, description, appendDescription, aliases, fixed, defaults";

/**
 * A pattern that names one tool exactly: globs read `[]`, `()`, `!`, `{}` and
 * `*` in a name as a pattern, so `report[1]` is `report1`, and a rule meant
 * to hide the tool would miss it.
 */
const EXACT = "exact:";

/**
 * How a glob reads a name: a `.` at its start or after a `/` is a character
 * like any other (`dot`), and so is a line break (`flags: "s"`): picomatch
 * makes each glob a regular expression, whose `.` stops at one, so `**` and
 * a glob's negation (`!files.*`, every tool but these) left a tool named
 * `admin\ndelete` unmatched, and listed.
 */
const GLOB_OPTIONS = { dot: true, flags: "s", expandRange: rangeOfCharacters };

/** A range in braces picomatch cannot read as the operator meant it; the glob is refused. */
class UnreadRange extends Error {}

/**
 * A range in braces as picomatch reads it, a character class, where that is
 * what it means: one letter or digit at each end, no step. Any other picomatch
 * reads as a class too, and names other tools than meant: `{1..20}` is
 * `[1-20]` (one of 1, 2 and 0), `{01..10}` one of 0 to 1 and 0, `{1..9..2}`
 * any digit or `-`, `{^..z}` any character but `-` and `z`.
 */
function rangeOfCharacters(...parts: unknown[]): string {
  // picomatch hands over the range's parts, then its options.
  const ends = parts.slice(0, -1);
  const single = (end: unknown) => typeof end === "string" && /^[A-Za-z0-9]$/.test(end);
  if (ends.length !== 2 || !ends.every(single)) throw new UnreadRange();
  return `[${ends.sort().join("-")}]`;
}

/** Whether picomatch reads a range in the glob as no class of characters (`rangeOfCharacters`). */
function readsNoRange(pattern: string): boolean {
  try {
    picomatch.makeRe(pattern, GLOB_OPTIONS);
    return false;
  } catch (error) {
    return error instanceof UnreadRange;
  }
}

/**
 * Whether a glob writes `**` (or more stars) beside another character of a
 * name (`github**`, `**delete`, `a/***`): picomatch reads it as `*`, which
 * stops at a `/`, where the docs' `**` crosses it, so the operator's rule
 * would leave `github/delete_repo` out of what it names. Apart from a name's
 * characters, a `**` stands at the glob's ends (after the `!`s that negate
 * it), beside a `/`, or at a brace's or parenthesis' edge or separator while
 * one is open. A `\` escapes what follows, and a `[…]` is one character.
 */
function starsBesideName(pattern: string): boolean {
  let start = 0;
  while (pattern[start] === "!") start++;
  let braces = 0;
  let parens = 0;
  const apart = (char: string | undefined, inBraces: string, inParens: string) =>
    char === undefined ||
    char === "/" ||
    (braces > 0 && inBraces.includes(char)) ||
    (parens > 0 && inParens.includes(char));
  for (let at = start; at < pattern.length; at++) {
    const char = pattern[at];
    if (char === "\\") at++;
    else if (char === "[") at = Math.max(at, pattern.indexOf("]", at + 2));
    else if (char === "{") braces++;
    else if (char === "}") braces = Math.max(0, braces - 1);
    else if (char === "(") parens++;
    else if (char === ")") parens = Math.max(0, parens - 1);
    else if (char === "*") {
      let end = at;
      while (pattern[end] === "*") end++;
      const before = at === start ? undefined : pattern[at - 1];
      if (end - at > 2) return true;
      if (end - at === 2 && !(apart(before, "{,", "(|") && apart(pattern[end], "},", ")|"))) {
        return true;
      }
      at = end - 1;
    }
  }
  return false;
}

const glob = v.pipe(
  v.string("must be a glob (a string)"),
  v.nonEmpty("must not be empty"),
  v.check((pattern) => pattern !== EXACT, `must name a tool after ${EXACT}`),
  // A glob: every tool but one named `exact:admin`, `admin` among them.
  v.check(
    (pattern) => !/^!+exact:/.test(pattern),
    `negates an ${EXACT} name, which only a glob can be: write the glob, each pattern character escaped (!report\\[1\\] for every tool but report[1])`,
  ),
  v.check(
    (pattern) => pattern.startsWith(EXACT) || !readsNoRange(pattern),
    "writes a range in braces picomatch reads as one character of a set: write {a..e} or {1..9} (one letter or digit at each end, no step), or the names ({1,2,10,20})",
  ),
  v.check(
    (pattern) => pattern.startsWith(EXACT) || !starsBesideName(pattern),
    "writes ** beside other characters, where picomatch reads it as *, which stops at a /: write ** as a part of its own to cross a / (github/**, **/*delete*), or * within a name",
  ),
  v.check((pattern) => {
    if (pattern.startsWith(EXACT)) return true;
    try {
      // `debug`: else picomatch takes a glob it makes no regular expression of
      // (`admin.{delete,drop`) for one that matches no name, and its rule is off without a word.
      picomatch.makeRe(pattern, { ...GLOB_OPTIONS, debug: true });
      return true;
    } catch {
      return false;
    }
  }, "is not a glob picomatch can read (a { or ( left open, a \\ at its end, a range written backwards such as [z-a])"),
);
const globs = v.optional(v.array(glob, "must be a list of globs"), []);

/**
 * The longest name a glob is matched against, what MCP asks of a tool's name:
 * a glob's regular expression backtracks, each `*` by up to the name's length
 * again, and a name may be as long as a listing or a call's body. `*delete*`
 * took a second of CPU for a call naming a tool by 128 KB of `delete`s, and a
 * minute for 1 MiB (test/worker/request-bounds.test.ts); at this length, at
 * most 0.05 ms for a glob of four `*`s, 0.6 ms for six. A longer name only
 * an `exact:` name names.
 */
export const MAX_GLOBBED_CHARS = 128;

/**
 * Whether a name matches any of `patterns`: an `exact:` name, or a glob (as
 * picomatch reads one, it names its own text too). A name longer than
 * `MAX_GLOBBED_CHARS` matches a glob's pattern where `longMatches`: `hide`
 * hides it, as it cannot tell, and `only` lists it not.
 */
function matcher(patterns: readonly string[], longMatches: boolean): (name: string) => boolean {
  const exact = new Set(patterns.map((p) => (p.startsWith(EXACT) ? p.slice(EXACT.length) : p)));
  const globbed = patterns.filter((p) => !p.startsWith(EXACT));
  if (globbed.length === 0) return (name) => exact.has(name);
  const isMatch = picomatch(globbed, GLOB_OPTIONS);
  return (name) =>
    exact.has(name) || (name.length > MAX_GLOBBED_CHARS ? longMatches : isMatch(name));
}

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

/** MCP's tool annotations (`ToolAnnotations`), of which the hints are booleans. */
const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"];
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

const ToolRuleSchema = v.strictObject(
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
  `is not a rule for a tool (${TOOL_RULE_KEYS})`,
);

const RulesDocument = v.strictObject(
  {
    hide: globs,
    only: globs,
    hideAnnotated: annotationMatch,
    onlyAnnotated: annotationMatch,
    tools: v.optional(table(ToolRuleSchema, "must be a table of tools by original name"), {}),
  },
  `is not a rule (${RULE_KEYS})`,
);

const NOT_A_TABLE = "must be a table, or JSON text holding one";
const ROUNDED =
  "holds a number that is not kept exactly (more digits than a double keeps, or past a double's range): the origin would get another; write it as a string if the tool takes one";

/** `TOOL_RULES`: a table (TOML), or JSON text holding one (`wrangler dev --var`). */
export const ToolRulesSetting = v.optional(
  v.pipe(
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
    RulesDocument,
  ),
);

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
    if (hideAnnotated !== undefined && matches(hideAnnotated, tool.annotations)) return true;
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
