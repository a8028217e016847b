/**
 * Tool definition pins (`TOOL_CHANGES`, docs/rules.md, "Changed
 * definitions"): a digest of a tool's definition (input schema, description,
 * annotations, title, output schema), what it is made of, and how two are
 * compared. A tool listed later with another definition is a change the
 * operator may want to see before a model does (a "rug pull"):
 * caller-pins.ts decides, per caller, what a listing's pins mean; the
 * operator accepts a held change by writing the accept key the log line
 * names (`acceptCommand`).
 *
 * Pins live in KV (stored-map.ts), shared by every profile. KV is eventually
 * consistent: another location may list a tool under its old pin, or hold
 * it, for 60 s or more after a change was taken or accepted.
 *
 * Pins stored by earlier versions are taken over by the whole pin, without a
 * log line or a hold, the first time the tool is listed with a definition
 * that matches what they cover: fingerprints only (before the digest), or
 * no title and output schema (before those were pinned).
 */
import { sha256 } from "../digest";
import { holdsRounded, stringifyUnrounded } from "../json";
import { textAt } from "../json-spans";
import { UNSEEN } from "../log";
import { fingerprint32 } from "../names/stable-hash";
import type { ListedTool } from "../protocol/tools-list";
import { WrittenTool } from "../protocol/written-tool";
import type { ChangeScope } from "../rules/tool-rules";

/** What a definition pin covers, as the isolate last saw it listed. */
export interface Definition {
  description: unknown;
  annotations: unknown;
  title: unknown;
  outputSchema: unknown;
  /** What the pin covers (`TOOL_CHANGES_SCOPE`). */
  scope: ChangeScope;
  /**
   * `<digest>/<schema>/<description>/<annotations>/<title>/<output
   * schema>/<digest of the last two>`, fingerprints between the digests. The
   * digests (SHA-256) decide whether a definition changed: an origin can
   * make a changed one match a 32-bit fingerprint in milliseconds. The
   * fingerprints only tell which part changed. Title and output schema have
   * a digest of their own (`-` when the tool has neither), so that the first
   * stays what versions before them stored and read. A promise: WebCrypto is
   * async, and the listing that makes it is not (tool-map.ts keeps naming
   * free of awaits).
   */
  pin: Promise<string>;
}

const PARTS = ["inputSchema", "description", "annotations", "title", "outputSchema"] as const;

/** What a pin is made of; an earlier version's lacks `extra`, or also `digest`. */
export interface PinParts {
  /** The digest of schema, description and annotations. */
  digest?: string;
  /** `<schema>/<description>/<annotations>`. */
  fingerprints: string;
  /** `<title>/<output schema>/<their digest>`. */
  extra?: string;
}

/**
 * The one reading of a pin's format, here and in stored-map.ts: cut at its
 * first and fourth slash when it has 3 or 6, else the fingerprints of a
 * version before the digest. Found by `indexOf`, not split into every part
 * and joined again: the map's every write reads each pin this way.
 */
export function pinParts(pin: string): PinParts {
  const slashes: number[] = [];
  for (let at = pin.indexOf("/"); at !== -1 && slashes.length < 7; at = pin.indexOf("/", at + 1)) {
    slashes.push(at);
  }
  const [first = 0, , , fourth = 0] = slashes;
  const digest = pin.slice(0, first);
  if (slashes.length === 3) return { digest, fingerprints: pin.slice(first + 1) };
  if (slashes.length === 6) {
    return { digest, fingerprints: pin.slice(first + 1, fourth), extra: pin.slice(fourth + 1) };
  }
  return { fingerprints: pin };
}

/** The pin `pinParts` reads back. */
export const joinPin = ({ digest, fingerprints, extra }: PinParts) =>
  digest === undefined
    ? fingerprints
    : `${digest}/${fingerprints}${extra === undefined ? "" : `/${extra}`}`;

/**
 * `JSON.stringify(value)`, but where the parse found a number whose text says
 * more than its double (json.ts `holdsRounded`: `12345678901234567891`, not
 * `1.0`): that number is written as its text. Python's `json` reads `…891`
 * and `…890` as two integers, a model reads two texts, and the proxy forwards
 * the text as it came: one double to `JSON.parse`, they are two definitions.
 * A value without one is written as before, so its pin is the one earlier
 * versions stored.
 */
const exactJson = (value: unknown): string =>
  holdsRounded(value) ? stringifyUnrounded(value) : JSON.stringify(value);

/** `exactJson(value)`; `undefined` for a member `JSON.stringify` leaves out. */
const jsonOf = (value: unknown): string | undefined =>
  value === undefined ? undefined : exactJson(value);

/**
 * `jsonOf` a tool's description or annotations: copied from the listing's
 * text where it is written as `JSON.stringify` writes its parse there (which
 * holds no number a double rounds), not written again.
 */
const memberJson = (tool: ListedTool, key: "description" | "annotations"): string | undefined =>
  (tool instanceof WrittenTool ? tool.stringifiedJson(key) : undefined) ?? jsonOf(tool[key]);

const fingerprintOfJson = (json: string | undefined) =>
  json === undefined ? "-" : fingerprint32(json).toString(36);

const fingerprintOf = (value: unknown) => fingerprintOfJson(jsonOf(value));

/**
 * `JSON.stringify({ inputSchema, description, annotations })` from each
 * member's JSON: a pin fingerprints description and annotations from the
 * same texts it digests, each written once (two of 1,000 a first listing's
 * digests cost otherwise).
 */
function joinedDefinition(schema: string, description?: string, annotations?: string): string {
  const described = description === undefined ? "" : `,"description":${description}`;
  const annotated = annotations === undefined ? "" : `,"annotations":${annotations}`;
  return `{"inputSchema":${schema}${described}${annotated}}`;
}

/**
 * The input schema's JSON (`exactJson`), copied from the listing's text
 * where it is written as `JSON.stringify` writes its parse there, which
 * holds no number a double rounds: then the schema is not read
 * (listed-schema.ts).
 */
const schemaText = (tool: ListedTool) =>
  tool.schemaJson ? textAt(tool.schemaJson) : exactJson(tool.inputSchema ?? null);

/**
 * What the first digest covers: `JSON.stringify({ inputSchema, description,
 * annotations })`, each number a double rounds written as its text
 * (`exactJson`), the schema copied from the listing's text where it is
 * written that way there.
 */
export function definitionText(tool: ListedTool & { annotations?: unknown }): string {
  return joinedDefinition(
    schemaText(tool),
    memberJson(tool, "description"),
    memberJson(tool, "annotations"),
  );
}

/**
 * `<title>/<output schema>/<digest of JSON.stringify({ title, outputSchema })>`,
 * a number a double rounds written as its text (`exactJson`); `-/-/-` for neither.
 */
function extraPart({ title, outputSchema }: ListedTool): string | Promise<string> {
  if (title === undefined && outputSchema === undefined) return "-/-/-";
  const fingerprints = `${fingerprintOf(title)}/${fingerprintOf(outputSchema)}`;
  const both = { title, outputSchema };
  const text = holdsRounded(outputSchema) ? stringifyUnrounded(both) : JSON.stringify(both);
  return sha256(text).then((digest) => `${fingerprints}/${digest}`);
}

/**
 * The definition of `tool`, whose schema fingerprint is `schemaHash`.
 * `known`: the definition the isolate pinned for the very schema listed now
 * (compared, not fingerprinted), reused when nothing else changed, so a
 * repeated listing digests nothing. Compared as the digest reads each part
 * (`exactJson`): a part written again in another key order, or with another
 * number a double rounds, is a change to a new isolate, so here too.
 * `proven`: the pin a listing pin proves is this definition's
 * (listing-pin.ts), asked only where a digest is needed: then it is
 * digested only where none does.
 */
export function definitionOf(
  tool: ListedTool & { annotations?: unknown },
  schemaHash: string,
  known: Definition | undefined,
  scope: ChangeScope = "definition",
  proven?: () => Promise<string | undefined> | undefined,
): Definition {
  const { description, annotations, title, outputSchema } = tool;
  if (
    known &&
    known.scope === scope &&
    (scope === "schema" ||
      (known.description === description &&
        known.title === title &&
        jsonOf(known.annotations) === jsonOf(annotations) &&
        jsonOf(known.outputSchema) === jsonOf(outputSchema)))
  ) {
    return known;
  }
  const proof = proven?.();
  const pin = proof
    ? proof.then((pin) => pin ?? pinOf(tool, schemaHash, scope))
    : pinOf(tool, schemaHash, scope);
  return { description, annotations, title, outputSchema, pin, scope };
}

/**
 * One listed tool's definition, and its pin under either scope, digested on
 * demand (`takesOverScope`): what a listing's pins are decided from.
 */
export interface ListedDefinition {
  original: string;
  definition: Definition;
  pinAs?: (scope: ChangeScope) => Promise<string>;
}

/** Each definition's pin, by original. */
export async function pinsOf(
  definitions: ReadonlyArray<{ original: string; definition: Definition }>,
): Promise<Map<string, string>> {
  const pins = new Map<string, string>();
  for (const { original, definition } of definitions) pins.set(original, await definition.pin);
  return pins;
}

/** The pin of `tool`'s definition under `scope`, digested. */
export function pinOf(
  tool: ListedTool & { annotations?: unknown },
  schemaHash: string,
  scope: ChangeScope,
): Promise<string> {
  if (scope === "schema") {
    return sha256(
      definitionText({ name: tool.name, inputSchema: tool.inputSchema, ...schemaJsonOf(tool) }),
    ).then((digest) => joinPin({ digest, fingerprints: `${schemaHash}/*/*`, extra: "*/*/-" }));
  }
  const description = memberJson(tool, "description");
  const annotations = memberJson(tool, "annotations");
  const fingerprints = `${schemaHash}/${fingerprintOfJson(description)}/${fingerprintOfJson(annotations)}`;
  const digest = sha256(joinedDefinition(schemaText(tool), description, annotations));
  const extra = extraPart(tool);
  // Most tools have neither title nor output schema: no second digest, and no
  // `Promise.all` (about 5% of a first listing of 1,000 such tools).
  return typeof extra === "string"
    ? digest.then((first) => joinPin({ digest: first, fingerprints, extra }))
    : Promise.all([digest, extra]).then(([first, last]) =>
        joinPin({ digest: first, fingerprints, extra: last }),
      );
}

const schemaJsonOf = ({ schemaJson }: ListedTool) => (schemaJson ? { schemaJson } : {});

/** `TOOL_CHANGES_SCOPE=schema` writes `*` for what its pins do not cover. */
const scopeOf = ({ fingerprints }: PinParts): ChangeScope =>
  fingerprints.endsWith("/*/*") ? "schema" : "definition";

/**
 * Whether pin `now` takes the place of `stored`, written by an earlier
 * version, without a change: `stored` covers less, and agrees on all it covers.
 */
export function takesOver(stored: string, now: string): boolean {
  const [before, after] = [pinParts(stored), pinParts(now)];
  // Made under the other TOOL_CHANGES_SCOPE: a fingerprint an origin can make collide does not
  // decide it (`takesOverScope`).
  if (scopeOf(before) !== scopeOf(after)) return false;
  return (
    before.extra === undefined &&
    before.fingerprints === after.fingerprints &&
    (before.digest === undefined || before.digest === after.digest)
  );
}

/**
 * Whether pin `now` takes the place of `stored`, which the other scope made
 * (the operator switched TOOL_CHANGES_SCOPE): where the definition listed
 * now, pinned under that scope (`asStored`), is `stored`, or takes its
 * place. Decided by a digest, never by a fingerprint: to `schema`, a
 * definition that changed in any part is a change, as the input schema alone
 * cannot be told from the digest of the whole; to `definition`, its input
 * schema alone decides.
 */
export async function takesOverScope(
  stored: string,
  now: string,
  asStored: (scope: ChangeScope) => Promise<string>,
): Promise<boolean> {
  const scope = scopeOf(pinParts(stored));
  if (scope === scopeOf(pinParts(now))) return false;
  const pin = await asStored(scope);
  return pin === stored || takesOver(stored, pin);
}

/**
 * Which parts of a definition differ between two pins, by their
 * fingerprints: none when only a digest tells the change, as for a
 * definition made to collide.
 */
export function changedParts(from: string, to: string): Array<(typeof PARTS)[number]> {
  const fingerprintsOf = (pin: string) => {
    const { fingerprints, extra } = pinParts(pin);
    return [...fingerprints.split("/"), ...(extra?.split("/").slice(0, 2) ?? [])];
  };
  const [a, b] = [fingerprintsOf(from), fingerprintsOf(to)];
  // A pin of an earlier version, or of the schema alone (`*`), has no fingerprint for what it
  // did not cover: not compared.
  const covered = (part: string | undefined) => part !== undefined && part !== "*";
  return PARTS.filter((_, i) => covered(a[i]) && covered(b[i]) && a[i] !== b[i]);
}

/**
 * The KV key that accepts `original`'s new definition `pin`: one per tool, as
 * two tools may have the same definition; its value is the original's name.
 */
export const acceptKey = (origin: string, pin: string, original: string) =>
  `${origin}:accept:${pin}/${fingerprintOf(original)}`;

/**
 * A definition of one tool the operator accepted, as the isolate notes it:
 * tools may have the same definition, and an accept key accepts it for one
 * of them (a pin holds no line break).
 */
export const acceptedPin = (original: string, pin: string) => `${original}\n${pin}`;

/** What a terminal acts on or does not show: C0 controls, and log.ts `UNSEEN`. */
const UNPRINTABLE = new RegExp(`[\\u0000-\\u001f${UNSEEN}]`, "gu");

/** `character` as bash's and zsh's `$'…'` write it: `\xHH`, `\uHHHH` or, past U+FFFF, `\UHHHHHHHH`. */
const escaped = (character: string) => {
  const code = character.codePointAt(0) ?? 0;
  if (code < 0x80) return `\\x${code.toString(16).padStart(2, "0")}`;
  return code <= 0xffff
    ? `\\u${code.toString(16).padStart(4, "0")}`
    : `\\U${code.toString(16).padStart(8, "0")}`;
};

/**
 * `text` as one word of a POSIX shell or zsh, in a command to paste (here, and npm run check's):
 * a tool's name is the origin's, an environment's wrangler.toml's, and either may hold `$(…)`;
 * zsh reads a word that starts with `=` as a command's path (`=ls` is `/bin/ls`). A name with a
 * character a terminal acts on or does not show is written `$'…'` (bash, zsh), each such
 * character escaped: printed, the command shows the name it accepts, and pasted, accepts it.
 */
export function shellWord(text: string): string {
  if (/^[\w.,:/@%+=-]+$/.test(text) && !/^[-=]/.test(text)) return text;
  if (text.search(UNPRINTABLE) === -1) return `'${text.replaceAll("'", "'\\''")}'`;
  return `$'${text.replace(/[\\']/g, "\\$&").replace(UNPRINTABLE, escaped)}'`;
}

/**
 * The command that accepts `original`'s definition `pin`, ready to paste in
 * the repository (scripts/holds.ts): for the tenant `environment` names (its
 * `WRANGLER_ENV`), or, with none, for `wrangler dev` on this machine.
 */
export function acceptCommand(
  pin: string,
  original: string,
  environment: string | undefined,
  local = environment === undefined,
): string {
  const where = `${environment === undefined ? "" : ` --env ${environment}`}${local ? " --local" : ""}`;
  // A name that starts with a dash goes after `--`, or it would be read as an option.
  return original.startsWith("-")
    ? `npm run holds -- accept --pin ${pin}${where} -- ${shellWord(original)}`
    : `npm run holds -- accept ${shellWord(original)} --pin ${pin}${where}`;
}
