/**
 * `WWW-Authenticate` challenges (RFC 9110 §11.6.1, §11.2), read with the
 * position of every parameter value, so one value can be replaced and every
 * other byte of the header kept as sent. Pure.
 *
 *   challenge  = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
 *   auth-param = token BWS "=" BWS ( token / quoted-string )
 *   token68    = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
 *
 * Challenges and parameters share one comma-separated list, so after a comma a
 * token followed by `=` is another parameter and any other token starts the
 * next challenge. A header that breaks the grammar is read up to the first
 * error and no further: what follows is never rewritten.
 */

export interface ChallengeParam {
  /** Lower-cased: parameter names are case-insensitive. */
  name: string;
  /** The value, unquoted and unescaped. */
  value: string;
  /** Where the value's raw text (quotes included) starts and ends in the header. */
  start: number;
  end: number;
}

export interface Challenge {
  /** Lower-cased: schemes are case-insensitive. */
  scheme: string;
  params: ChallengeParam[];
}

const TCHAR = /[!#$%&'*+.^_`|~0-9A-Za-z-]/;
const TOKEN68 = /[A-Za-z0-9\-._~+/]/;

class Reader {
  position = 0;
  constructor(readonly text: string) {}

  get done() {
    return this.position >= this.text.length;
  }

  private at(offset = 0) {
    return this.text[this.position + offset] ?? "";
  }

  /** Optional whitespace (OWS, BWS): spaces and tabs. */
  skipSpace() {
    while (this.at() === " " || this.at() === "\t") this.position++;
  }

  token(): string {
    const start = this.position;
    while (TCHAR.test(this.at())) this.position++;
    return this.text.slice(start, this.position);
  }

  /** List separators: at least one comma, with whitespace and empty elements around. */
  separators(): boolean {
    const start = this.position;
    this.skipSpace();
    let commas = 0;
    while (this.at() === "," || this.at() === " " || this.at() === "\t") {
      if (this.at() === ",") commas++;
      this.position++;
    }
    if (commas === 0) this.position = start;
    return commas > 0;
  }

  /** Whether `token BWS "="` starts here: a parameter, not the next challenge's scheme. */
  atParam(): boolean {
    const start = this.position;
    const name = this.token();
    this.skipSpace();
    const isParam = name !== "" && this.at() === "=";
    this.position = start;
    return isParam;
  }

  /** Whether a token68 starts here: its characters, `=` padding, then a comma or the end. */
  atToken68(): boolean {
    let end = this.position;
    while (TOKEN68.test(this.text[end] ?? "")) end++;
    if (end === this.position) return false;
    while (this.text[end] === "=") end++;
    while (this.text[end] === " " || this.text[end] === "\t") end++;
    return end === this.text.length || this.text[end] === ",";
  }

  skipToken68() {
    while (TOKEN68.test(this.at()) || this.at() === "=") this.position++;
  }

  /** One `name=value` parameter, or `undefined` where the grammar breaks. */
  param(): ChallengeParam | undefined {
    const name = this.token().toLowerCase();
    this.skipSpace();
    this.position++; // "="
    this.skipSpace();
    const start = this.position;
    const value = this.at() === '"' ? this.quoted() : this.token();
    if (value === undefined || this.position === start) return undefined;
    return { name, value, start, end: this.position };
  }

  /** A quoted-string's value, or `undefined` when it is unterminated. */
  private quoted(): string | undefined {
    this.position++; // the opening quote
    let value = "";
    while (!this.done) {
      const char = this.at();
      this.position++;
      if (char === '"') return value;
      if (char === "\\") {
        value += this.at();
        this.position++;
      } else {
        value += char;
      }
    }
    return undefined;
  }
}

/** The challenges of a `WWW-Authenticate` value, each parameter with its value's position. */
export function parseChallenges(header: string): Challenge[] {
  const reader = new Reader(header);
  const challenges: Challenge[] = [];
  reader.separators();
  while (!reader.done) {
    const scheme = reader.token();
    if (scheme === "") break;
    const challenge: Challenge = { scheme: scheme.toLowerCase(), params: [] };
    challenges.push(challenge);
    reader.skipSpace();
    let separated = false;
    if (reader.atToken68()) {
      reader.skipToken68();
    } else {
      while (reader.atParam()) {
        const param = reader.param();
        if (!param) return challenges;
        challenge.params.push(param);
        separated = reader.separators();
        if (!separated) break;
      }
    }
    if (!separated && !reader.separators()) break;
  }
  return challenges;
}

/**
 * What a header's `Bearer` challenges say of a refused token (RFC 6750 §3):
 * their `error` and `scope`, as the first that writes each has them.
 */
export function bearerRefusal(header: string): { error?: string; scope?: string } {
  const params = parseChallenges(header)
    .filter(({ scheme }) => scheme === "bearer")
    .flatMap(({ params }) => params);
  const refusal: { error?: string; scope?: string } = {};
  for (const name of ["error", "scope"] as const) {
    const value = params.find((param) => param.name === name)?.value;
    if (value !== undefined) refusal[name] = value;
  }
  return refusal;
}

/** A value as a quoted-string. */
export function quote(value: string): string {
  return `"${value.replace(/[\\"]/g, (char) => `\\${char}`)}"`;
}

/**
 * `header` with the values of some parameters replaced: `replace` is asked for
 * each parameter of each challenge and returns the new value, or `undefined`
 * to keep it. Everything else stays as sent, byte for byte.
 */
export function replaceChallengeParams(
  header: string,
  replace: (challenge: Challenge, param: ChallengeParam) => string | undefined,
): string {
  const edits: Array<{ start: number; end: number; text: string }> = [];
  for (const challenge of parseChallenges(header)) {
    for (const param of challenge.params) {
      const value = replace(challenge, param);
      if (value !== undefined)
        edits.push({ start: param.start, end: param.end, text: quote(value) });
    }
  }
  let result = header;
  for (const { start, end, text } of edits.reverse()) {
    result = result.slice(0, start) + text + result.slice(end);
  }
  return result;
}
