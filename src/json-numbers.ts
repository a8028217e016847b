/**
 * JSON numbers as their texts write them, against the doubles they read as:
 * which values a double may have rounded (`mayBeRounded`, `readsExactly`,
 * `mayRound`), and a number's text in parts (`numberParts`). Pure;
 * json-exact.ts writes numbers back as their texts had them.
 */
/**
 * Whether `value` is, or holds, a number whose text may have had more digits
 * than the double it was read as keeps: an integer past 2^53, one that
 * `JSON.stringify` writes with 16 significant digits or more, or one past a
 * double's range (`1e400`). Any other is written with the value its text had
 * (`1.50` as `1.5`, `1e2` as `100`), but for a text of more digits than a
 * double keeps that reads as one of fewer (`0.10000000000000000001` as `0.1`).
 */
export const mayBeRounded = (value: unknown): boolean =>
  holdsNumber(
    value,
    (number) =>
      !Number.isFinite(number) ||
      (Number.isInteger(number) ? !Number.isSafeInteger(number) : significantDigits(number) >= 16),
  );

/**
 * Whether the JSON number written at `[start, end)` of `text` may say more
 * than its double (`readsExactly`): 16 characters or more, or an exponent
 * (`1e400`, `1e-400`). Any other has at most 15 significant digits, which a
 * double keeps: no two such numbers read as one double. Read before a number
 * is, as most are not.
 */
export function mayRound(text: string, start = 0, end = text.length): boolean {
  if (end - start > 15) return true;
  // `| 0x20` makes `E` an `e`, and leaves digits, `-`, `+` and `.` as they are.
  for (let at = start; at < end; at++) if ((text.charCodeAt(at) | 0x20) === 0x65) return true;
  return false;
}

/** Whether `value` is, or holds, a number `test` holds of. */
export function holdsNumber(value: unknown, test: (number: number) => boolean): boolean {
  // Its own stack: a value may nest deeper than a call stack goes.
  const pending = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item === "object" && item !== null) {
      for (const inner of Object.values(item)) pending.push(inner);
    } else if (typeof item === "number" && test(item)) return true;
  }
  return false;
}

/** How many significant digits `JSON.stringify` writes `value` with (the shortest that read back as it). */
const significantDigits = (value: number) => digitsOf(JSON.stringify(value)).length;

/**
 * A JSON number's text in parts, read off the text, not the double (which makes `1e-400` a 0):
 * its digits (sign and point aside), how many of them follow the point, and its exponent.
 */
export function numberParts(text: string): { digits: string; fraction: number; exponent: number } {
  const e = text.search(/[eE]/);
  const mantissa = e === -1 ? text : text.slice(0, e);
  const point = mantissa.indexOf(".");
  return {
    digits: mantissa.replace(/[-.]/g, ""),
    fraction: point === -1 ? 0 : mantissa.length - point - 1,
    exponent: e === -1 ? 0 : Number(text.slice(e + 1)),
  };
}

/**
 * A JSON number's significant digits, as its text writes them: sign, point, exponent and the
 * zeros at either end aside. Loops, not a regex: one backtracks over a run of zeros.
 */
function digitsOf(text: string): string {
  const { digits } = numberParts(text);
  let [from, to] = [0, digits.length];
  while (from < to && digits.charCodeAt(from) === 0x30) from++;
  while (to > from && digits.charCodeAt(to - 1) === 0x30) to--;
  return digits.slice(from, to);
}

/**
 * Whether a JSON number's text `source` says no more than the double `value` it reads as: finite,
 * and of the double's significant digits (`9007199254740992` is 2^53; `9007199254740993` reads
 * as it, and `1e400` as Infinity, which JSON writes as null). No `source`: only finite.
 */
export const readsExactly = (source: string | undefined, value: number): boolean =>
  Number.isFinite(value) &&
  (source === undefined || digitsOf(source) === digitsOf(JSON.stringify(value)));
