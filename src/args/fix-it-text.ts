/**
 * The fix-it text a model reads when `ARGUMENT_VALIDATION=enforce` refuses a
 * call (docs/arguments.md): validate.ts's issues, the keys received, the
 * closest declared key to one it got wrong, and the declared arguments.
 * Bounded (docs/limits.md): it names at most `MAX_LISTED` issues and keys,
 * suggests at most `MAX_SUGGESTIONS` keys, and compares only keys of at most
 * `MAX_KEY_CHARS` characters (edit distance is quadratic).
 */
import { encodePointer } from "@cfworker/json-schema";
import { isPlainObject } from "../json";
import { cutBetweenCharacters } from "../text-cut";
import { foldKey } from "./coalesce";
import { propertiesOf } from "./json-schema";
import { missingKey, type ValidationIssue } from "./validate";

/** Levenshtein distance; quadratic, so callers bound what they compare. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        substitution,
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/** Issues and keys the fix-it text names at most, and keys it suggests a correction for. */
const MAX_LISTED = 20;
const MAX_SUGGESTIONS = 10;
/** Keys longer than this are named cut short and get no suggestion (edit distance is quadratic). */
const MAX_KEY_CHARS = 64;
const MAX_LINE_CHARS = 240;
/** Declared keys a suggestion is looked for among. */
const MAX_CANDIDATES = 200;

const clip = (text: string, max: number) =>
  text.length <= max ? text : `${cutBetweenCharacters(text, max)}…`;

/** `names` quoted, at most `MAX_LISTED` of them, then how many more there are. */
function quoted(names: readonly string[], what: string): string {
  const shown = names.slice(0, MAX_LISTED).map((name) => `\`${clip(name, MAX_KEY_CHARS)}\``);
  const more = names.length - shown.length;
  return more > 0 ? `${shown.join(", ")} and ${more} more ${what}` : shown.join(", ");
}

/**
 * The name of `names` closest to `given` by edit distance, each compared as
 * `fold` writes it (the first of the closest); `undefined` where none is
 * within `within` edits. Quadratic in their lengths: `given` past `maxChars`
 * is compared with nothing, and names past it are not compared.
 */
export function closestName(
  given: string,
  names: Iterable<string>,
  {
    fold = (name: string) => name,
    within = Number.POSITIVE_INFINITY,
    maxChars = MAX_KEY_CHARS,
  } = {},
): string | undefined {
  if (given.length > maxChars) return undefined;
  const folded = fold(given);
  let closest: string | undefined;
  let least = within + 1;
  for (const name of names) {
    if (name.length > maxChars) continue;
    const distance = editDistance(folded, fold(name));
    if (distance < least) [closest, least] = [name, distance];
  }
  return closest;
}

const field = (location: string) =>
  location === "#" ? "the arguments" : `\`${location.slice(2).replaceAll("/", ".")}\``;

/**
 * An issue of what an argument the model is not shown requires where it is given, as the schema
 * it sees says it (docs/rules.md, `fixed`): a name, required; a schema, by its own issues alone
 * (`undefined`). Written `Instance has "<key>" but does not have "<name>".` (or `match …`).
 */
function asShown(
  issue: ValidationIssue,
  unshown: ReadonlySet<string>,
): ValidationIssue | undefined {
  const dependent = issue.keyword === "dependentRequired" || issue.keyword === "dependencies";
  // A fixed argument is one of the arguments', not of an object inside them.
  if (!dependent || issue.location !== "#") return issue;
  for (const key of unshown) {
    const start = `Instance has "${key}" but does not `;
    if (!issue.message.startsWith(start)) continue;
    const rest = issue.message.slice(start.length);
    if (rest === "match dependant schema.") return undefined;
    if (!rest.startsWith('have "') || !rest.endsWith('".')) continue;
    const message = `Instance does not have required property "${rest.slice(6, -2)}".`;
    return { ...issue, keyword: "required", message };
  }
  return issue;
}

/**
 * `issues` told the model: none about an argument it is not shown (an
 * operator's fixed one), at its location or below, or required by name; what
 * one requires beside it, as required.
 */
function issuesShown(all: readonly ValidationIssue[], unshown: ReadonlySet<string>) {
  if (unshown.size === 0) return all;
  const at = [...unshown].map((key) => `#/${encodePointer(key)}`);
  const issues = all.flatMap((issue) => asShown(issue, unshown) ?? []);
  return issues.filter((issue) => {
    const missing = missingKey(issue);
    if (missing !== undefined && issue.location === "#" && unshown.has(missing)) return false;
    return !at.some((place) => issue.location === place || issue.location.startsWith(`${place}/`));
  });
}

/**
 * The fix-it text for a call its schema refuses. `unshown`: arguments the
 * operator's rules set and leave out of the schema the model sees (`fixed`,
 * docs/rules.md), which it names nowhere: not as received (the proxy set
 * them), declared, suggested for a key the model got wrong, or at fault.
 * `shownAs`: the name the model was shown for each root argument its view
 * renamed (schemas/passes/property-keys.ts), by the origin's: the text
 * names it so, not by the origin's name, which the model never saw.
 */
export function describeInvalidCall(
  tool: string,
  args: Record<string, unknown>,
  inputSchema: unknown,
  allIssues: readonly ValidationIssue[],
  unshown: ReadonlySet<string> = new Set(),
  shownAs: ReadonlyMap<string, string> = new Map(),
): string {
  const named = (key: string) => shownAs.get(key) ?? key;
  // Issues locate a root argument by its pointer segment (`#/Account%20Number/…`).
  const bySegment = new Map([...shownAs].map(([key, shown]) => [encodePointer(key), shown]));
  const at = (location: string) => {
    const end = location.indexOf("/", 2);
    const shown = bySegment.get(end < 0 ? location.slice(2) : location.slice(2, end));
    return shown === undefined
      ? field(location)
      : `\`${shown}${end < 0 ? "" : location.slice(end).replaceAll("/", ".")}\``;
  };
  const lines = [
    `Invalid arguments for tool \`${tool}\`; the tool was not called. Fix these and call it again:`,
  ];
  const issues = issuesShown(allIssues, unshown);
  for (const issue of issues.slice(0, MAX_LISTED)) {
    const missing = missingKey(issue);
    if (missing !== undefined) {
      const parent = issue.location === "#" ? "" : ` in ${at(issue.location)}`;
      const name = issue.location === "#" ? named(missing) : missing;
      lines.push(clip(`- missing required field \`${name}\`${parent}`, MAX_LINE_CHARS));
    } else {
      lines.push(clip(`- ${at(issue.location)}: ${issue.message}`, MAX_LINE_CHARS));
    }
  }
  if (issues.length > MAX_LISTED) lines.push(`- … and ${issues.length - MAX_LISTED} more issues`);
  const received = Object.keys(args).filter((key) => !unshown.has(key));
  lines.push(
    received.length > 0
      ? `Keys received: ${quoted(received.map(named), "keys")}.`
      : "No arguments were received.",
  );
  const properties = isPlainObject(inputSchema)
    ? propertiesOf(inputSchema, inputSchema)
    : undefined;
  const declared = Object.keys(properties ?? {})
    .filter((key) => !unshown.has(key))
    .map(named);
  const unknown = received.filter((key) => !Object.hasOwn(properties ?? {}, key));
  for (const key of unknown.slice(0, MAX_SUGGESTIONS)) {
    const name = clip(key, MAX_KEY_CHARS);
    const suggestion = closestName(key, declared.slice(0, MAX_CANDIDATES), { fold: foldKey });
    lines.push(
      declared.length === 0
        ? `Unknown key \`${name}\`: this tool declares no arguments.`
        : suggestion === undefined
          ? `Unknown key \`${name}\`.`
          : `Unknown key \`${name}\`: did you mean \`${suggestion}\`?`,
    );
  }
  if (unknown.length > MAX_SUGGESTIONS) {
    lines.push(`… and ${unknown.length - MAX_SUGGESTIONS} more unknown keys.`);
  }
  if (declared.length > 0) lines.push(`Declared arguments: ${quoted(declared, "arguments")}.`);
  return lines.join("\n");
}
