/**
 * Steps 2 and 3 of argument repair, in one walk over the arguments and the
 * tool's `inputSchema`: at each object, keys are coalesced (coalesce.ts), then
 * each declared property's value is coerced (coerce.ts) and walked in turn, so
 * an object that arrived as a JSON string is repaired inside too.
 *
 * Pure and bounded: at most `MAX_DEPTH` levels and `MAX_NODES` values are
 * visited; past either, the rest is forwarded as it came and the report says
 * `limited`. Results are built with `Object.fromEntries`, so a key named
 * `__proto__` stays an ordinary key and no prototype is ever touched. An
 * object nothing was done to is returned as the same object.
 */
import {
  type ExactText,
  isPlainObject,
  markMadeFrom,
  numberText,
  PLACES_ONLY,
  placesOnly,
  stringText,
  writtenAsIn,
  writtenAsText,
} from "../json";
import { coalesceKeys, spellingsOf } from "./coalesce";
import { coerceValue } from "./coerce";
import { foldedMembers, memberInAnotherCase } from "./enum-case";
import {
  allowedTypes,
  declaredProperties,
  forbidsAdditionalProperties,
  type JsonType,
  requiredOf,
  type Schema,
  takesKeysAsSent,
} from "./json-schema";
import { namedValues, valuesBudget } from "./named-values";
import { itemsOf, otherKeysSchema, tuplePlaces } from "./schema-parts";
import { type RefTargets, readingOf, resolvedIn } from "./schema-reading";

const MAX_DEPTH = 32;
const MAX_NODES = 10_000;
/**
 * The declared keys one call reads of its objects' schemas (and folds, coalesce.ts): each object
 * schema once, however many values it applies to, and what a `$ref` points at once however many
 * properties name it. Read again for each, 1,000 properties naming one object of 20,000 keys
 * (a 0.58 MB schema) took 22 s of CPU for one call.
 */
const MAX_KEYS_READ = 100_000;
/** An object whose schema's declared keys were past `MAX_KEYS_READ`: left as it came. */
const LIMITED = Symbol("limited");

export interface RepairReport {
  /** Keys renamed to a declared property, by path (`payload-json` → `payload_json`). */
  renamedKeys: Array<{ from: string; to: string }>;
  coercions: Array<{ path: string; from: JsonType; to: JsonType }>;
  /** Paths of strings made the `enum` or `const` member they name in another case (enum-case.ts). */
  enumCased: string[];
  /**
   * Paths of values dropped: `null` where the schema allows no null for a property it does not
   * require, losing aliases.
   */
  dropped: string[];
  /**
   * The walk stopped at MAX_DEPTH or MAX_NODES, deeper values unrepaired; or the schema's `enum`s
   * held more than one call may gather (named-values.ts `MAX_VALUES_READ`), the values past it
   * unrepaired against them.
   */
  limited: boolean;
}

const DROP = Symbol("drop");
/** An element a tuple's place says nothing of: left as it came. */
const AS_SENT = Symbol("as sent");
const NO_PROPERTIES: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * A number coerced from a string (`"9007199254740993"`, which a double rounds): placed in the
 * object or array rebuilt around it, written there as the string spelled it (json.ts).
 */
class Spelled {
  constructor(
    readonly value: number,
    readonly text: string,
  ) {}
}

/** `copy`, each number made from a string written there as the string spelled it. */
function spelledIn<T extends object>(copy: T, spelled: ReadonlyArray<[string, string]>): T {
  for (const [key, text] of spelled) writtenAsText(copy, key, text);
  return copy;
}

/** A property's path as repair reports it: `payload_json.amount` (array elements add `[2]`). */
export const joinPath = (path: string, key: string) => (path === "" ? key : `${path}.${key}`);

/**
 * `read`, once for each schema it is handed: a call's values share schemas (every element of
 * an array its `items`), and one reading may follow 64 branches of 16 `$ref` hops each
 * (json-schema.ts), so read again for each value, 100 objects of such a schema took 20 s of CPU.
 */
function readOnce<T>(read: (schema: unknown) => T): (schema: unknown) => T {
  const known = new Map<unknown, T>();
  return (schema) => {
    if (known.has(schema)) return known.get(schema) as T;
    const said = read(schema);
    known.set(schema, said);
    return said;
  };
}

class ArgumentRepair {
  readonly report: RepairReport = {
    renamedKeys: [],
    coercions: [],
    enumCased: [],
    dropped: [],
    limited: false,
  };
  /** How the JSON texts values were coerced from wrote theirs. */
  exact: ExactText | undefined;
  /** Each object whose keys were coalesced, and to what: kept only for `keysRespelled`. */
  respelled: WeakMap<object, ReadonlyMap<string, string>> | undefined;
  private nodes = 0;
  private readonly targets: RefTargets = new Map();
  /** What the schema's `enum`s and forms may have gathered of their values, in this whole call. */
  readonly budget = valuesBudget();
  private readonly allowedIn = readOnce((schema) => allowedTypes(schema, this.root, this.targets));
  private readonly itemsIn = readOnce((schema) => itemsOf(schema, this.root, this.targets));
  private readonly requiredIn = readOnce((schema) => requiredOf(schema, this.root, this.targets));
  private readonly valuesIn = readOnce((schema) =>
    namedValues(schema, this.root, this.targets, undefined, this.budget),
  );
  /** The values a string may be, and each string among them by its case folded: enum-case.ts. */
  private readonly stringsIn = readOnce((schema) =>
    namedValues(schema, this.root, this.targets, "string", this.budget),
  );
  private readonly membersIn = readOnce((values) => foldedMembers(values as ReadonlySet<unknown>));
  private readonly placesIn = readOnce((schema) => tuplePlaces(schema, this.root, this.targets));
  private readonly othersIn = readOnce((schema) =>
    otherKeysSchema(schema, this.root, this.targets),
  );
  /** Declared keys read so far in this call; past `MAX_KEYS_READ`, none is read (`LIMITED`). */
  private keysRead = 0;
  private readonly keysIn = readOnce((schema) => {
    // Past the bound nothing more is read: each form of its own read the keys again.
    if (this.keysRead > MAX_KEYS_READ) return LIMITED;
    const declared = declaredProperties(schema, this.root, this.targets);
    if (!declared) return undefined;
    this.keysRead += Object.keys(declared.properties).length;
    if (this.keysRead > MAX_KEYS_READ) return LIMITED;
    const { properties, complete } = declared;
    // Where keys are also taken by pattern or on a condition, or a branch left unread may declare
    // more, none is read as another spelling of a declared one.
    const spelled = complete && !takesKeysAsSent(schema, this.root, this.targets);
    return {
      properties,
      forbids: forbidsAdditionalProperties(schema, this.root, this.targets),
      spelledAs: spellingsOf(spelled ? Object.keys(properties) : []),
    };
  });

  constructor(
    private readonly root: Schema,
    /** How the texts the arguments were read from wrote their values: a number's text for a string. */
    private readonly read: ExactText | undefined,
  ) {}

  object(value: Record<string, unknown>, schema: unknown, path: string, depth: number) {
    const keys = this.keysIn(schema);
    // Its declared keys unread, none of its values is known to be a map's: all go as they came.
    if (keys === LIMITED) {
      this.report.limited = true;
      return value;
    }
    // The values of the keys it does not declare: a map's (its keys are data, never coalesced).
    const others = this.othersIn(schema);
    if (!keys && others === undefined) return value;
    const properties = keys?.properties ?? NO_PROPERTIES;
    const { entries, renamed, dropped } = keys
      ? coalesceKeys(value, keys.spelledAs, keys.forbids)
      : { entries: Object.entries(value), renamed: [], dropped: [] };
    let changed = renamed.length > 0 || dropped.length > 0;
    for (const { from, to } of renamed) {
      this.report.renamedKeys.push({ from: joinPath(path, from), to: joinPath(path, to) });
    }
    for (const key of dropped) this.report.dropped.push(joinPath(path, key));
    if (renamed.length > 0) {
      this.respelled?.set(value, new Map(renamed.map(({ from, to }) => [from, to])));
    }

    // Where each value was read: under its alias, where it was renamed.
    const readAt = new Map(renamed.map(({ from, to }) => [to, from]));
    const repaired: Array<[string, unknown]> = [];
    const spelled: Array<[string, string]> = [];
    let required: ReadonlySet<string> | undefined;
    for (const [key, child] of entries) {
      const declared = Object.hasOwn(properties, key);
      if (!declared && others === undefined) {
        repaired.push([key, child]);
        continue;
      }
      const at = readAt.get(key) ?? key;
      const written =
        typeof child === "number"
          ? numberText(value, at, child, this.read)
          : typeof child === "string"
            ? stringText(value, at, child)
            : undefined;
      const next = this.value(
        child,
        declared ? properties[key] : others,
        joinPath(path, key),
        depth + 1,
        written,
      );
      // A map's key is data, not a property the model may leave out: its `null` stays.
      if (next === DROP && !declared) repaired.push([key, child]);
      else if (next === DROP) {
        required ??= this.requiredIn(schema);
        // Left out, a required value would be missing where the model wrote one: sent as it
        // came, the origin (and validation) says what is wrong with it.
        if (required.has(key)) repaired.push([key, child]);
        else {
          this.report.dropped.push(joinPath(path, key));
          changed = true;
        }
      } else if (next instanceof Spelled) {
        spelled.push([key, next.text]);
        changed = true;
        repaired.push([key, next.value]);
      } else {
        changed ||= next !== child;
        repaired.push([key, next]);
      }
    }
    if (!changed) return value;
    const copy = writtenAsIn(Object.fromEntries(repaired), value, (key) => readAt.get(key) ?? key);
    // Under a coalesced key, it stands where another key held what it was built from.
    return spelledIn(markMadeFrom(copy, value), spelled);
  }

  /**
   * `current`, an array its schema reads as a tuple (or as nothing). A tuple's elements are left
   * as sent (a model shown one list of every place's schemas, as a view of a tuple is, may have
   * put a value in another place), but for a string its place's `enum` or `const` does not name
   * where that names the number or boolean the string writes (what a view of string enums,
   * `gemini`, `portable`, asked the model for there), or one string member in another case: not
   * a value of that place as sent, whichever place the model meant it for.
   */
  private tuple(current: unknown[], value: unknown, schema: unknown, path: string, depth: number) {
    const places = this.placesIn(schema);
    if (!places) return current;
    return this.elements(current, value, path, depth, (element, index) => {
      const place = index < places.length ? places[index] : undefined;
      return this.enumString(element, place) ? place : AS_SENT;
    });
  }

  /**
   * `current`'s elements, each repaired against the schema `schemaOf` gives it (`AS_SENT`: left
   * as it is); an element is never dropped: that would shift the ones after it.
   */
  private elements(
    current: unknown[],
    value: unknown,
    path: string,
    depth: number,
    schemaOf: (element: unknown, index: number) => unknown,
  ) {
    let changed = current !== value;
    const spelled: Array<[string, string]> = [];
    const elements = current.map((element, index) => {
      const schema = schemaOf(element, index);
      if (schema === AS_SENT) return element;
      const text =
        typeof element === "number"
          ? numberText(current, String(index), element, this.read)
          : undefined;
      const next = this.value(element, schema, `${path}[${index}]`, depth + 1, text, true);
      if (next instanceof Spelled) spelled.push([String(index), next.text]);
      const kept = next === DROP ? element : next instanceof Spelled ? next.value : next;
      changed ||= kept !== element;
      return kept;
    });
    if (!changed) return current;
    return spelledIn(writtenAsIn(elements, current), spelled);
  }

  /**
   * Whether `element` is a string `place`'s values do not name, standing for a number or boolean
   * they do, or for a string member in another case.
   */
  private enumString(element: unknown, place: unknown): boolean {
    if (typeof element !== "string" || element.trim() === "") return false;
    if (this.memberOf(element, place) !== undefined) return true;
    const values = this.valuesIn(place);
    if (values === undefined || values.has(element)) return false;
    return values.has(element === "true" ? true : element === "false" ? false : Number(element));
  }

  /**
   * The one string member of what `schema` names that `text`, a string it does not name, is in
   * another case; `undefined` where it names it, or none or several are.
   */
  private memberOf(text: string, schema: unknown): string | undefined {
    const strings = this.stringsIn(schema);
    if (strings === undefined || strings.has(text)) return undefined;
    return memberInAnotherCase(text, this.membersIn(strings));
  }

  value(
    value: unknown,
    named: unknown,
    path: string,
    depth: number,
    /** The text `value` was read from, where known: a number's, or a string's not as `JSON.stringify` writes it. */
    written?: string,
    /** Whether `value` is an array's element, which is never made an array (coerce.ts). */
    element = false,
  ): unknown {
    if (++this.nodes > MAX_NODES || depth > MAX_DEPTH) {
      this.report.limited = true;
      return value;
    }
    // Read as what its `$ref`s point at, once however many properties name it: an origin's schema
    // may name one object of thousands of keys, or one long `enum`, from a thousand places.
    const schema = resolvedIn(named, readingOf(this.root, this.targets)) ?? named;
    let current = value;
    const allowed = this.allowedIn(schema);
    if (allowed) {
      // A string its schema takes may still be none its enum names, standing for a number it
      // does, or for a member in another case.
      const values =
        typeof current === "string" && allowed.has("string") && allowed.size > 1
          ? this.valuesIn(schema)
          : undefined;
      const coercion = coerceValue(current, allowed, written, this.read, values, element);
      if (coercion === "drop") return DROP;
      if (coercion === undefined && typeof current === "string" && allowed.has("string")) {
        const member = this.memberOf(current, schema);
        if (member !== undefined) {
          this.report.enumCased.push(path);
          return member;
        }
      }
      if (coercion) {
        this.report.coercions.push({ path, from: coercion.from, to: coercion.to });
        current = coercion.value;
        this.exact = placesOnly(this.exact, coercion.exact);
        if (coercion.written !== undefined) {
          this.exact = PLACES_ONLY;
          return new Spelled(current as number, coercion.written);
        }
      }
    }
    if (isPlainObject(current)) return this.object(current, schema, path, depth);
    if (Array.isArray(current)) {
      const items = this.itemsIn(schema);
      return items
        ? this.elements(current, value, path, depth, () => items)
        : this.tuple(current, value, schema, path, depth);
    }
    return current;
  }
}

export function repairArguments(
  args: Record<string, unknown>,
  inputSchema: unknown,
  /** How the texts `args` were read from wrote their values (json.ts). */
  read?: ExactText,
): { arguments: Record<string, unknown>; report: RepairReport; exact?: ExactText } {
  const root = isPlainObject(inputSchema) ? inputSchema : {};
  const repair = new ArgumentRepair(root, read);
  const repaired = repair.object(args, root, "", 0);
  // Values some `enum` would have named past the bound went as sent.
  if (repair.budget.spent) repair.report.limited = true;
  return {
    arguments: repaired,
    report: repair.report,
    ...(repair.exact ? { exact: repair.exact } : {}),
  };
}

/**
 * The keys repair reads as another spelling of a declared one (`V` as `v`), by the object that
 * writes them: the way back reads a value the view asked for as text under the key repair will
 * give it (schemas/way-back.ts), so both walks take one decision, which only the origin's schema
 * (its patterns, conditions, `additionalProperties`) can make. A walk of its own, as bounded as
 * repair: only where a key the view does not declare is met.
 */
export function keysRespelled(
  args: Record<string, unknown>,
  inputSchema: unknown,
): (value: object) => ReadonlyMap<string, string> | undefined {
  const root = isPlainObject(inputSchema) ? inputSchema : {};
  const repair = new ArgumentRepair(root, undefined);
  const respelled = new WeakMap<object, ReadonlyMap<string, string>>();
  repair.respelled = respelled;
  repair.object(args, root, "", 0);
  return (value) => respelled.get(value);
}
