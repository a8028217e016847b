/**
 * Where a JSON text stops being JSON, told the way an operator who wrote it by
 * hand looks for it: line, column and what was expected there. For settings
 * (`TOOL_RULES` given as JSON text): the runtime's own `JSON.parse` message
 * has no line or column, and some of its messages quote the text, which may
 * hold a secret.
 *
 * One linear scan, nesting bounded by `MAX_NESTING` as every JSON reading is.
 */
import { MAX_NESTING } from "./json-spans";

export interface JsonSyntaxError {
  /** 1-based. */
  line: number;
  /** 1-based, in characters (code points) of that line. */
  column: number;
  /** What the text should have had there, in words (`"," or "}"`). */
  expected: string;
}

class Stop {
  constructor(
    readonly at: number,
    readonly expected: string,
  ) {}
}

const SPACE = /[ \t\n\r]*/y;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const LITERAL = /true|false|null/y;
const ESCAPE = /["\\/bfnrt]|u[0-9a-fA-F]{4}/y;

class Scanner {
  at = 0;
  constructor(readonly text: string) {}

  space(): void {
    SPACE.lastIndex = this.at;
    SPACE.test(this.text);
    this.at = SPACE.lastIndex;
  }

  take(char: string): boolean {
    if (this.text[this.at] !== char) return false;
    this.at++;
    return true;
  }

  expect(char: string, expected: string): void {
    if (!this.take(char)) throw new Stop(this.at, expected);
  }

  sticky(pattern: RegExp): boolean {
    pattern.lastIndex = this.at;
    if (!pattern.test(this.text) || pattern.lastIndex === this.at) return false;
    this.at = pattern.lastIndex;
    return true;
  }

  string(): void {
    this.expect('"', "a string");
    for (;;) {
      const code = this.text.charCodeAt(this.at);
      if (code === 0x22) {
        this.at++;
        return;
      }
      if (code === 0x5c) {
        this.at++;
        if (this.sticky(ESCAPE)) continue;
        throw new Stop(
          this.at - 1,
          'an escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\u and four hex digits)',
        );
      }
      // NaN past the end; a control character must be escaped.
      if (!(code >= 0x20)) {
        throw new Stop(
          this.at,
          this.at >= this.text.length
            ? "the string's closing \""
            : "the string's closing \" (a control character such as a line break must be escaped)",
        );
      }
      this.at++;
    }
  }

  value(depth: number): void {
    this.space();
    const char = this.text[this.at];
    if (char === "{" || char === "[") {
      if (depth === MAX_NESTING)
        throw new Stop(this.at, `at most ${MAX_NESTING} levels of nesting`);
      this.at++;
      if (char === "{") this.members(depth + 1);
      else this.items(depth + 1);
      return;
    }
    if (char === '"') this.string();
    else if (!this.sticky(NUMBER) && !this.sticky(LITERAL)) {
      throw new Stop(this.at, "a value (an object, array, string, number, true, false or null)");
    }
  }

  members(depth: number): void {
    this.space();
    if (this.take("}")) return;
    for (;;) {
      this.space();
      if (this.text[this.at] !== '"') throw new Stop(this.at, "a member's name in double quotes");
      this.string();
      this.space();
      this.expect(":", '":" after the member\'s name');
      this.value(depth);
      this.space();
      if (this.take("}")) return;
      this.expect(",", '"," or "}" after a member');
    }
  }

  items(depth: number): void {
    this.space();
    if (this.take("]")) return;
    for (;;) {
      this.value(depth);
      this.space();
      if (this.take("]")) return;
      this.expect(",", '"," or "]" after an item');
    }
  }
}

/** Line and column of the character at `offset` of `text`. */
function position(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lineStart = Math.max(before.lastIndexOf("\n"), before.lastIndexOf("\r")) + 1;
  const line = (before.match(/\r\n|\r|\n/g)?.length ?? 0) + 1;
  return { line, column: [...before.slice(lineStart)].length + 1 };
}

/** Where `text` stops being one JSON value, or `undefined` when it is one. */
export function jsonSyntaxError(text: string): JsonSyntaxError | undefined {
  const scanner = new Scanner(text);
  try {
    scanner.value(0);
    scanner.space();
    if (scanner.at < text.length) throw new Stop(scanner.at, "the end of the text");
    return undefined;
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
    return { ...position(text, error.at), expected: error.expected };
  }
}
