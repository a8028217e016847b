/**
 * Where values are written in a JSON text, found without parsing it: what
 * lets the proxy change a few values of a large message (a `tools/list`
 * result, protocol/listing-text.ts) and copy the sender's text for the rest.
 *
 * A scan is linear: strings are jumped over with `indexOf`, nested values
 * skipped with their brackets matched (at most `MAX_NESTING` deep), numbers
 * and literals read as JSON writes them. It reads the structure only; a
 * string's escapes are not checked: whoever reads a value parses its span,
 * and text copied as it came is the sender's, mistakes included. Meant for
 * text a peer sent, so every failure is `undefined` (or -1), never a throw.
 */

/** Where a value is written: `[start, end)`. */
export type Span = readonly [start: number, end: number];

/** The text of a value written at `span` in a larger `text`. */
export const textAt = ({ text, span }: { text: string; span: Span }) =>
  text.slice(span[0], span[1]);

/**
 * `slice` with its own characters: V8 makes a slice of 13 characters or more
 * a view that keeps the whole text alive, and what the proxy keeps of a
 * message (a tool's name, its schema) outlives it. Joined to a character
 * and sliced again, it is copied once.
 */
export const ownCopy = (slice: string) => ` ${slice}`.slice(1);

/**
 * Deeper nesting than this is not scanned (the caller parses instead), nor
 * parsed (`nestsTooDeep`): what reads a parsed value recurses (the
 * comparison of a listed schema with the one remembered, `JSON.stringify`
 * with a replacer, validation), and a value 10,000 levels deep, 20 KB of
 * text, overflows its stack.
 */
export const MAX_NESTING = 512;

export const QUOTE = 0x22;
const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;

export const isSpace = (code: number) =>
  code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;

export function skipSpace(text: string, at: number): number {
  while (isSpace(text.charCodeAt(at))) at++;
  return at;
}

/** The index after the string whose opening quote is at `start`; -1 when it never closes. */
export function stringEnd(text: string, start: number): number {
  let quote = text.indexOf('"', start + 1);
  while (quote !== -1 && text.charCodeAt(quote - 1) === BACKSLASH) {
    let backslashes = 1;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) break;
    quote = text.indexOf('"', quote + 1);
  }
  return quote === -1 ? -1 : quote + 1;
}

const SCALAR = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;

/** The index after the number or literal at `start`; -1 when there is none. */
export function scalarEnd(text: string, start: number): number {
  SCALAR.lastIndex = start;
  return SCALAR.test(text) ? SCALAR.lastIndex : -1;
}

/** The closers still open while a value is skipped: one scan at a time, never deeper than `MAX_NESTING`. */
const closers = new Uint8Array(MAX_NESTING);

/**
 * The index after the JSON value that starts at `start` (no whitespace
 * before it); -1 when no well-bracketed value starts there, or it nests
 * deeper than `MAX_NESTING` in all, counting the `outer` levels open around
 * it (as `nestsTooDeep` counts from the text's start). json-written.ts
 * `writtenEnd` is the same, telling what the value's text shows.
 */
export function valueEnd(text: string, start: number, outer = 0): number {
  const first = text.charCodeAt(start);
  if (first === QUOTE) return stringEnd(text, start);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) return scalarEnd(text, start);
  let depth = 0;
  for (let at = start; at < text.length; ) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      at = stringEnd(text, at);
      if (at === -1) return -1;
      continue;
    }
    if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (outer + depth === MAX_NESTING) return -1;
      // `}` and `]` are two code points after `{` and `[`.
      closers[depth++] = code + 2;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      if (closers[--depth] !== code) return -1;
      if (depth === 0) return at + 1;
    } else if (code !== COMMA && code !== COLON && !isSpace(code)) {
      at = scalarEnd(text, at);
      if (at === -1) return -1;
      continue;
    }
    at++;
  }
  return -1;
}

/**
 * Whether a value in `text` nests deeper than `MAX_NESTING`: json.ts reads no
 * such text. One pass that counts brackets outside strings; a text too short
 * to nest that deep is not looked at.
 */
export function nestsTooDeep(text: string): boolean {
  if (text.length <= 2 * MAX_NESTING) return false;
  let depth = 0;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      const end = stringEnd(text, at);
      if (end === -1) return false;
      at = end - 1;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth > MAX_NESTING) return true;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/**
 * The keys a listing writes in every tool, its result and its message, by
 * their length: one written so is read as this very string, not sliced from
 * the text. A listing of 1,000 tools reads some 5,000 keys; each slice is a
 * string to allocate, and to hash again as a `Map`'s key, where a literal is
 * hashed once.
 */
const KNOWN_KEYS: ReadonlyArray<readonly string[]> = (() => {
  const keys = [
    ...["name", "title", "description", "inputSchema", "outputSchema", "annotations"],
    ...["icons", "execution", "_meta", "tools", "nextCursor", "jsonrpc", "id", "result"],
  ];
  // Dense, and read only within its length: no read past it or of a hole.
  const byLength: string[][] = Array.from({ length: 13 }, () => []);
  for (const key of keys) byLength[key.length]?.push(key);
  return byLength;
})();

/** The key whose string starts at `start` and ends before `end`; `undefined` when it is not a JSON string. */
function keyAt(text: string, start: number, end: number): string | undefined {
  const length = end - start - 2;
  if (length < KNOWN_KEYS.length) {
    for (const key of KNOWN_KEYS[length] as readonly string[]) {
      if (text.startsWith(key, start + 1)) return key;
    }
  }
  const inner = text.slice(start + 1, end - 1);
  if (!inner.includes("\\")) return inner;
  try {
    return JSON.parse(text.slice(start, end)) as string;
  } catch {
    return undefined;
  }
}

/** An object's members as written: key → its value's span, and the index after the object. */
export interface ObjectText {
  members: Map<string, Span>;
  end: number;
}

/**
 * The members of the object at `start` (its `{`); `undefined` when none is
 * written there, or a key is written twice (readers disagree on which one
 * counts). `member` reads each value from its first character to the index
 * after it (-1: not a value); by default it is skipped. `keys`, when given,
 * gets where each key is written, its quotes included.
 */
export function readObject(
  text: string,
  start: number,
  member: (key: string, at: number) => number = (_, at) => valueEnd(text, at),
  keys?: Map<string, Span>,
): ObjectText | undefined {
  const members = new Map<string, Span>();
  const end = readMembers(
    text,
    start,
    (key, at, keyStart, keyEnd) => {
      // Its members' map finds a key written twice: `readMembers` need not look again.
      if (members.has(key)) return -1;
      keys?.set(key, [keyStart, keyEnd]);
      const valueEnd = member(key, at);
      if (valueEnd !== -1) members.set(key, [at, valueEnd]);
      return valueEnd;
    },
    false,
  );
  return end === -1 ? undefined : { members, end };
}

/**
 * Keys an object's reader looks among before it keeps them in a `Set`: a
 * tool writes a handful, and each key is checked against those before it in
 * at most this many comparisons.
 */
const FEW_KEYS = 8;

/**
 * `readObject` without its members kept: `member` is given each key, where
 * its value starts and where the key is written (its quotes included), and
 * returns the index after the value (-1: not a value). The index after the
 * object; -1 when none is written there, or a key is written twice (unless
 * `once` is false: `member` refuses it). A listing's tools are read so: a
 * `Map` and a span for each member were some 400 bytes a tool to allocate
 * and collect.
 */
export function readMembers(
  text: string,
  start: number,
  member: (key: string, at: number, keyStart: number, keyEnd: number) => number,
  once = true,
): number {
  if (text.charCodeAt(start) !== OPEN_BRACE) return -1;
  const few: string[] = [];
  let many: Set<string> | undefined;
  let at = skipSpace(text, start + 1);
  if (text.charCodeAt(at) === CLOSE_BRACE) return at + 1;
  for (;;) {
    if (text.charCodeAt(at) !== QUOTE) return -1;
    const keyEnd = stringEnd(text, at);
    const key = keyEnd === -1 ? undefined : keyAt(text, at, keyEnd);
    if (key === undefined) return -1;
    if (once) {
      if (many?.has(key) ?? few.includes(key)) return -1;
      if (many !== undefined) many.add(key);
      else if (few.push(key) === FEW_KEYS) many = new Set(few);
    }
    const keyStart = at;
    at = skipSpace(text, keyEnd);
    if (text.charCodeAt(at) !== COLON) return -1;
    const valueStart = skipSpace(text, at + 1);
    const end = member(key, valueStart, keyStart, keyEnd);
    if (end === -1) return -1;
    at = skipSpace(text, end);
    const next = text.charCodeAt(at);
    if (next === CLOSE_BRACE) return at + 1;
    if (next !== COMMA) return -1;
    at = skipSpace(text, at + 1);
  }
}

/**
 * The elements of the array at `start` (its `[`), and the index after it;
 * `undefined` when none is written there. `element` reads each one from its
 * first character to the index after it (-1: not a value); by default it is skipped.
 */
export function readArray(
  text: string,
  start: number,
  element: (at: number) => number = (at) => valueEnd(text, at),
): { elements: Span[]; end: number } | undefined {
  if (text.charCodeAt(start) !== OPEN_BRACKET) return undefined;
  const elements: Span[] = [];
  let at = skipSpace(text, start + 1);
  if (text.charCodeAt(at) === CLOSE_BRACKET) return { elements, end: at + 1 };
  for (;;) {
    const end = element(at);
    if (end === -1) return undefined;
    elements.push([at, end]);
    at = skipSpace(text, end);
    const next = text.charCodeAt(at);
    if (next === CLOSE_BRACKET) return { elements, end: at + 1 };
    if (next !== COMMA) return undefined;
    at = skipSpace(text, at + 1);
  }
}

/**
 * The first key that the JSON value at `start` writes in one object beside
 * another it reads alike (`read(key)` equal for both: the same key twice, or
 * in another case); `undefined` when there is none; `null` when it nests
 * deeper than `MAX_NESTING` (or a string never closes). For a text
 * `JSON.parse` read, where a string followed by `:` is a key. (json.ts
 * `keyFoldedTwice` is the same check of a value, which holds no key twice.)
 */
export function keyReadTwice(
  text: string,
  start: number,
  read: (key: string) => string,
): string | null | undefined {
  // The keys of each object still open; `undefined` for an array.
  const open: Array<Set<string> | undefined> = [];
  for (let at = start; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      const end = stringEnd(text, at);
      if (end === -1) return null;
      const keys = open.at(-1);
      if (keys !== undefined && text.charCodeAt(skipSpace(text, end)) === COLON) {
        const key = keyAt(text, at, end) ?? "";
        const readAs = read(key);
        if (keys.has(readAs)) return key;
        keys.add(readAs);
      }
      at = end - 1;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (open.length === MAX_NESTING) return null;
      open.push(code === OPEN_BRACE ? new Set() : undefined);
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      open.pop();
      if (open.length === 0) return undefined;
    }
  }
  return undefined;
}
