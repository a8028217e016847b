/**
 * JSON texts for lossless tests: generators of values written in every way a
 * sender may write them (exotic numbers, escapes, keys named like prototype
 * members), and a reading of a text that keeps each number's and string's
 * own text, so that a rounded number or a rewritten escape is a difference.
 */
import fc from "fast-check";
import { foldedKey } from "../../src/json";

/** Among them, one double written two ways (`…993` and `…992`) and one value (`1.50`, `1.5`). */
const NUMBERS = [
  "9007199254740993",
  "9007199254740992",
  "1.5",
  "123456789012345678901234567890",
  "1e400",
  "-0",
  "1.50",
  "1E5",
  "0.0000001",
  "-1.0e-7",
  "0",
  "42",
];
const STRINGS = ['"\\uD800"', '"caf\\u00e9"', '"a\\/b"', '"\\ud83d\\ude00"', '"512"', '"x"'];
const KEYS = [
  "__proto__",
  "constructor",
  "prototype",
  "a",
  "path",
  "max_bytes",
  "max-bytes",
  "city",
];

export const numberText = fc.oneof(
  fc.constantFrom(...NUMBERS),
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
);
const stringText = fc.oneof(
  fc.constantFrom(...STRINGS),
  fc.string({ unit: "grapheme", maxLength: 6 }).map((s) => JSON.stringify(s)),
);
const keyText = fc
  .oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 4 }))
  .map((key) => JSON.stringify(key));

/** JSON text of an object from [key text, value text] pairs, keys unique in any case (else refused). */
export const objectText = (value: fc.Arbitrary<string>) =>
  fc
    .uniqueArray(fc.tuple(keyText, value), {
      selector: ([key]) => foldedKey(JSON.parse(key)),
      maxLength: 4,
    })
    .map((entries) => `{${entries.map(([key, item]) => `${key}:${item}`).join(",")}}`);

export const { value: valueText } = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    numberText,
    stringText,
    fc.constantFrom("true", "false", "null"),
    objectText(tie("value")),
    fc.array(tie("value"), { maxLength: 3 }).map((items) => `[${items.join(",")}]`),
  ),
}));

export type Tree = { text: string } | Tree[] | { [key: string]: Tree };

/** A JSON text with each number and string as the text that wrote it. */
export function sourceTree(text: string): Tree {
  return JSON.parse(text, (_key, value, context?: { source?: string }) =>
    typeof value === "object" && value !== null ? value : { text: context?.source ?? "" },
  );
}

export const isLeaf = (tree: Tree): tree is { text: string } =>
  !Array.isArray(tree) &&
  Object.keys(tree).length === 1 &&
  typeof (tree as { text?: unknown }).text === "string";

/** The paths (`params.arguments.max_bytes`) at which two trees differ. */
export function differences(
  before: Tree | undefined,
  after: Tree | undefined,
  path: string,
): string[] {
  if (before === undefined || after === undefined) return before === after ? [] : [path];
  if (isLeaf(before) || isLeaf(after)) {
    return isLeaf(before) && isLeaf(after) && before.text === after.text ? [] : [path];
  }
  if (Array.isArray(before) !== Array.isArray(after)) return [path];
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  const at = (tree: Tree, key: string) =>
    Object.hasOwn(tree, key) ? (tree as Record<string, Tree>)[key] : undefined;
  return [...keys].flatMap((key) =>
    differences(at(before, key), at(after, key), path === "" ? key : `${path}.${key}`),
  );
}

/** Space between tokens, as senders write it (a pretty-printer's newlines, a tab, a CRLF). */
export const spaceText = fc.constantFrom("", " ", "\n  ", "\t", "\r\n");

/**
 * A key written as `JSON.stringify` would not: with a `\u` escape, or an
 * array index (`"10"`, which a JavaScript object holds before `"b"`, in
 * ascending order, wherever it was written); none a tool's schema declares.
 */
const oddKeyText = fc.oneof(
  fc
    .constantFrom("0", "2", "10", "4294967294", "4294967295", "b", "x-y", "café")
    .map((key) => JSON.stringify(key)),
  fc
    .constantFrom("zeta", "a", "é")
    .map((key) => `"\\u${key.charCodeAt(0).toString(16).padStart(4, "0")}${key.slice(1)}"`),
);

/** JSON text of an object written unusually: `oddKeyText` keys, space around every token. */
export const oddObjectText = (value: fc.Arbitrary<string>) =>
  fc
    .uniqueArray(fc.tuple(spaceText, oddKeyText, spaceText, value, spaceText), {
      selector: ([, key]) => foldedKey(JSON.parse(key)),
      maxLength: 5,
    })
    .chain((entries) =>
      spaceText.map(
        (end) =>
          `{${entries.map(([before, key, colon, item, after]) => `${before}${key}${colon}:${colon}${item}${after}`).join(",")}${end}}`,
      ),
    );

/** `valueText`, its objects written as `oddObjectText` writes them and its arrays spaced. */
export const { value: oddValueText } = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    numberText,
    stringText,
    fc.constantFrom("true", "false", "null"),
    oddObjectText(tie("value")),
    fc
      .array(fc.tuple(spaceText, tie("value")), { maxLength: 3 })
      .map((items) => `[${items.map(([space, item]) => `${space}${item}`).join(",")}]`),
  ),
}));
