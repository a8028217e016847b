/**
 * What a tool's members must be for MCP's clients to take the listing that
 * holds it. The official SDKs' clients (1.x; 2.x on 2025-11-25 and on
 * 2026-07-28) and the Vercel AI SDK's check the whole `tools/list` result
 * against their schema of a tool, and throw for all of it over one member of
 * one tool: a `description` an origin wrote `null` (Go's `encoding/json` and
 * Jackson write an unset field so) leaves the client no tool at all
 * (test/node/misshapen-tools-frameworks.test.ts, each member tried with each
 * client). A member that is not what they all take is *misshapen*: the
 * listing shows the tool without it (the input schema, which every client
 * requires, as one they take). Pure.
 *
 * What they check, of a tool (`name` aside: an entry without a string one is
 * no tool): `title` and `description` strings; `annotations` an object whose
 * `title` is a string and whose hints are booleans; `icons` a list of
 * objects with a string `src` (`mimeType` a string, `sizes` strings, `theme`
 * `light` or `dark`); `_meta` an object; `execution` an object whose
 * `taskSupport` is `required`, `optional` or `forbidden` (the clients of
 * 2025-11-25); `inputSchema` and `outputSchema` objects whose root is
 * `type: "object"`, its `properties` an object of objects (SDK 1.x: `true`
 * is refused), its `required` a list of strings (not the 2026-07-28 client's),
 * its `$schema` a string (the 2026-07-28 client's). Other members, and other
 * keys of these, are not read, and pass as they came.
 */
import { isPlainObject, setOwn, writtenAsIn } from "../json";
import { readMembers, valueEnd } from "../json-spans";

/** The hints of MCP's tool `annotations`, each a boolean: what clients check, and rules may match. */
export const HINTS: readonly string[] = [
  "readOnlyHint",
  "destructiveHint",
  "idempotentHint",
  "openWorldHint",
];
const TASK_SUPPORT: readonly unknown[] = ["required", "optional", "forbidden"];
const THEMES: readonly unknown[] = ["light", "dark"];

/** The members of a tool checked here, each as `read` gives it (`undefined`: absent). */
export type ToolMember =
  | "title"
  | "description"
  | "inputSchema"
  | "outputSchema"
  | "annotations"
  | "icons"
  | "_meta"
  | "execution";

/** How a member is read: its kind where that is all it takes, its value where more is. */
export interface MemberReader {
  /** What the member's JSON is (`undefined`: absent), told from its first character where read from text. */
  memberKind(member: ToolMember): JsonKind | undefined;
  /** Its value, parsed. */
  memberValue(member: ToolMember): unknown;
  /** Whether its root is as the clients read a tool's schema; `undefined` where the reader cannot tell without its value. */
  rootReadsWell?(member: "inputSchema" | "outputSchema"): boolean | undefined;
}

export type JsonKind = "string" | "number" | "boolean" | "null" | "array" | "object";

/** The kind of a parsed value. */
export function kindOf(value: unknown): JsonKind | undefined {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  switch (typeof value) {
    case "string":
    case "number":
    case "boolean":
    case "object":
      return typeof value as JsonKind;
    default:
      return undefined;
  }
}

/** The kind of the JSON value written at `at` in `text`, by its first character. */
export function kindAt(text: string, at: number): JsonKind | undefined {
  switch (text.charCodeAt(at)) {
    case 0x22:
      return "string";
    case 0x7b:
      return "object";
    case 0x5b:
      return "array";
    case 0x6e:
      return "null";
    case 0x74:
    case 0x66:
      return "boolean";
    default:
      return at < text.length ? "number" : undefined;
  }
}

/** The reader of a parsed tool's members. */
export const parsedMembers = (tool: Partial<Record<ToolMember, unknown>>): MemberReader => ({
  memberKind: (member) => (tool[member] === undefined ? undefined : kindOf(tool[member])),
  memberValue: (member) => tool[member],
});

/** Whether a schema's root is as every client reads a tool's `inputSchema` or `outputSchema`. */
export function rootReadsWell(schema: unknown): boolean {
  if (!isPlainObject(schema) || schema.type !== "object") return false;
  const { properties, required, $schema } = schema;
  if ($schema !== undefined && typeof $schema !== "string") return false;
  if (required !== undefined && !(Array.isArray(required) && required.every(isString)))
    return false;
  if (properties === undefined) return true;
  if (!isPlainObject(properties)) return false;
  for (const key of Object.keys(properties)) if (!isObject(properties[key])) return false;
  return true;
}

/**
 * Whether the schema written at `start` in `text` reads as `rootReadsWell`
 * takes it, told from its text without parsing it; `undefined` where the
 * text does not tell (a member written twice, or past what is scanned).
 */
export function rootTextReadsWell(text: string, start: number): boolean | undefined {
  let typed = false;
  let well = true;
  const end = readMembers(text, start, (key, at) => {
    const after = valueEnd(text, at, 1);
    if (after === -1) return -1;
    if (key === "type") typed = text.slice(at, after) === '"object"';
    else if (key === "$schema") well &&= kindAt(text, at) === "string";
    else if (key === "required") well &&= requiredReadsWell(text.slice(at, after));
    else if (key === "properties") well &&= propertiesReadWell(text, at);
    return after;
  });
  return end === -1 ? undefined : well && typed;
}

function requiredReadsWell(text: string): boolean {
  if (text.charCodeAt(0) !== 0x5b) return false;
  try {
    const required: unknown = JSON.parse(text);
    return Array.isArray(required) && required.every(isString);
  } catch {
    return false;
  }
}

function propertiesReadWell(text: string, start: number): boolean {
  let well = true;
  const end = readMembers(
    text,
    start,
    (_, at) => {
      const kind = kindAt(text, at);
      well &&= kind === "object" || kind === "array";
      return valueEnd(text, at, 2);
    },
    false,
  );
  return end !== -1 && well;
}

/**
 * `schema`, a plain object, as every client takes a tool's `inputSchema`:
 * `type: "object"` (the arguments are one), a property `true` as `{}` and
 * `false` as `{"not":{}}` (the same schemas), one that is no schema as `{}`
 * (as a view reads one, passes/well-formed.ts), and a `properties`,
 * `required` or `$schema` of another type than JSON Schema's left out; the
 * rest as it was. The same where it already reads so.
 */
export function shapedRoot(schema: Record<string, unknown>): Record<string, unknown> {
  if (rootReadsWell(schema)) return schema;
  const shaped: Record<string, unknown> = writtenAsIn({ ...schema, type: "object" }, schema);
  const { properties, required, $schema } = schema;
  if ($schema !== undefined && typeof $schema !== "string") delete shaped.$schema;
  if (required !== undefined && !(Array.isArray(required) && required.every(isString))) {
    if (Array.isArray(required)) shaped.required = required.filter(isString);
    else delete shaped.required;
  }
  if (properties !== undefined) {
    if (!isPlainObject(properties)) delete shaped.properties;
    else {
      const each: Record<string, unknown> = {};
      for (const key of Object.keys(properties)) {
        const property = properties[key];
        // A property named `__proto__` is one of its own, not the object's prototype.
        setOwn(each, key, isObject(property) ? property : property === false ? { not: {} } : {});
      }
      shaped.properties = writtenAsIn(each, properties);
    }
  }
  return shaped;
}

/** What every client takes as a tool's `inputSchema` where the origin's is no object: any arguments. */
export const ANY_ARGUMENTS = { type: "object" } as const;

/**
 * The members of a tool the clients refuse, as paths (`description`,
 * `annotations.readOnlyHint`), in a fixed order; empty where it has none.
 * `inputSchema` is named where it is absent or no object (its root, where
 * it is one, is the view's: schemas/view.ts).
 */
export function misshapenMembers(read: MemberReader): string[] {
  const misshapen: string[] = [];
  for (const member of ["title", "description"] as const) {
    const kind = read.memberKind(member);
    if (kind !== undefined && kind !== "string") misshapen.push(member);
  }
  if (read.memberKind("inputSchema") !== "object") misshapen.push("inputSchema");
  const output = read.memberKind("outputSchema");
  if (output !== undefined) {
    const well =
      output === "object" &&
      (read.rootReadsWell?.("outputSchema") ?? rootReadsWell(read.memberValue("outputSchema")));
    if (!well) misshapen.push("outputSchema");
  }
  // An object's value is read for its keys; one whose text `JSON.parse` does not read (a raw
  // control character in a string), which no client reads either, is left out whole.
  const annotations = read.memberKind("annotations") && read.memberValue("annotations");
  if (isPlainObject(annotations)) {
    if (!optional(annotations.title, isString)) misshapen.push("annotations.title");
    for (const hint of HINTS) {
      if (!optional(annotations[hint], isBoolean)) misshapen.push(`annotations.${hint}`);
    }
  } else if (read.memberKind("annotations") !== undefined) misshapen.push("annotations");
  const icons = read.memberKind("icons");
  if (icons !== undefined) {
    const value = icons === "array" ? read.memberValue("icons") : undefined;
    if (!(Array.isArray(value) && value.every(isIcon))) misshapen.push("icons");
  }
  const meta = read.memberKind("_meta");
  if (meta !== undefined && meta !== "object") misshapen.push("_meta");
  const execution = read.memberKind("execution");
  if (execution !== undefined) {
    const value = execution === "object" ? read.memberValue("execution") : undefined;
    if (!isPlainObject(value)) misshapen.push("execution");
    else if (!optional(value.taskSupport, (task) => TASK_SUPPORT.includes(task))) {
      misshapen.push("execution.taskSupport");
    }
  }
  return misshapen;
}

/**
 * The members of a `tools/list` result beside its tools that the clients
 * refuse the whole result over, by the kind `kindOf` tells of each: a
 * `nextCursor` that is no string (`null`: Go's and Java's unset one), a
 * `_meta` that is no object. Left out, they say nothing: no next page, no
 * metadata.
 */
export function misshapenResultMembers(
  kindOf: (member: "nextCursor" | "_meta") => JsonKind | undefined,
): string[] {
  const cursor = kindOf("nextCursor");
  const meta = kindOf("_meta");
  return [
    ...(cursor === undefined || cursor === "string" ? [] : ["nextCursor"]),
    ...(meta === undefined || meta === "object" ? [] : ["_meta"]),
  ];
}

/**
 * `tool` without the members `paths` name (`misshapenMembers`), its other
 * members, and their order, as they were; `inputSchema` is left to the
 * caller, who writes one the clients take in its place.
 */
export function withoutMembers(
  tool: Record<string, unknown>,
  paths: readonly string[],
): Record<string, unknown> {
  const shown = writtenAsIn({ ...tool }, tool);
  for (const path of paths) {
    const dot = path.indexOf(".");
    if (dot === -1) {
      if (path !== "inputSchema") delete shown[path];
      continue;
    }
    const member = path.slice(0, dot);
    const inner = shown[member];
    if (!isPlainObject(inner)) continue;
    // A copy of its own: the origin's parsed tool is not changed.
    const copy = inner === tool[member] ? writtenAsIn({ ...inner }, inner) : inner;
    delete copy[path.slice(dot + 1)];
    shown[member] = copy;
  }
  return shown;
}

const isString = (value: unknown): value is string => typeof value === "string";
const isBoolean = (value: unknown): value is boolean => typeof value === "boolean";
/** An object to SDK 1.x's check of a schema (`typeof` "object", not `null`): an array too. */
const isObject = (value: unknown) => typeof value === "object" && value !== null;
const optional = (value: unknown, is: (value: unknown) => boolean) =>
  value === undefined || is(value);

function isIcon(icon: unknown): boolean {
  if (!isPlainObject(icon) || typeof icon.src !== "string") return false;
  const { mimeType, sizes, theme } = icon;
  return (
    optional(mimeType, isString) &&
    optional(sizes, (list) => Array.isArray(list) && list.every(isString)) &&
    (theme === undefined || THEMES.includes(theme))
  );
}
