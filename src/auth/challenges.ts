/**
 * `WWW-Authenticate` challenges (RFC 9110 §11.6.1, §11.2), read with the
 * position of every parameter, so a header can be written again from what
 * was read, each challenge and parameter as sent. Pure.
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
  /** Where the parameter's name starts in the header. */
  nameStart: number;
  /** Where the value's raw text (quotes included) starts and ends in the header. */
  start: number;
  end: number;
}

export interface Challenge {
  /** Lower-cased: schemes are case-insensitive. */
  scheme: string;
  /** The scheme as the header writes it. */
  written: string;
  /** A token68 in the place of parameters, as written. */
  token68?: string;
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

  token68(): string {
    const start = this.position;
    while (TOKEN68.test(this.at()) || this.at() === "=") this.position++;
    return this.text.slice(start, this.position);
  }

  /** One `name=value` parameter, or `undefined` where the grammar breaks. */
  param(): ChallengeParam | undefined {
    const nameStart = this.position;
    const name = this.token().toLowerCase();
    this.skipSpace();
    this.position++; // "="
    this.skipSpace();
    const start = this.position;
    const value = this.at() === '"' ? this.quoted() : this.token();
    if (value === undefined || this.position === start) return undefined;
    return { name, value, nameStart, start, end: this.position };
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
    const challenge: Challenge = { scheme: scheme.toLowerCase(), written: scheme, params: [] };
    challenges.push(challenge);
    reader.skipSpace();
    let separated = false;
    if (reader.atToken68()) {
      challenge.token68 = reader.token68();
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

/** How lenient readers find `resource_metadata`: anywhere in a header's text. */
const METADATA = /resource_metadata/i;

/**
 * `header` as a client may read it: each `resource_metadata` parameter, of
 * any challenge, with the value `replace` gives it (`undefined`: as sent),
 * and no other text that names it. The official SDK clients (1.x and 2.x)
 * take the first `resource_metadata=` in the header's text for the
 * parameter, wherever it is: in another parameter's value
 * (`realm="resource_metadata=https://…"`), at the end of another's name
 * (`xresource_metadata=`), past a break in the grammar where the proxy read
 * no further, in a DPoP challenge; and none written with spaces around `=`
 * or in capitals, as the grammar allows. So a header that names it anywhere
 * is written again from what was read: each challenge and parameter as sent,
 * `, ` between them, each `resource_metadata` as `resource_metadata="…"`; a
 * parameter or token68 that names it otherwise, and whatever follows a break
 * in the grammar, left out. A header that never names it is returned as sent.
 */
export function withResourceMetadata(
  header: string,
  replace: (param: ChallengeParam) => string | undefined,
): string {
  if (!METADATA.test(header)) return header;
  const written = parseChallenges(header).map((challenge) => {
    const params = challenge.params.flatMap((param) => {
      const raw = header.slice(param.start, param.end);
      if (param.name === "resource_metadata") {
        const value = replace(param);
        return [`resource_metadata=${value === undefined ? raw : quote(value)}`];
      }
      // Its raw text names it only where the value does: an escape's backslash is no letter of it.
      if (METADATA.test(param.name) || METADATA.test(param.value)) return [];
      return [header.slice(param.nameStart, param.end)];
    });
    const token68 =
      challenge.token68 === undefined || METADATA.test(challenge.token68)
        ? undefined
        : challenge.token68;
    const rest = token68 ?? params.join(", ");
    return rest === "" ? challenge.written : `${challenge.written} ${rest}`;
  });
  return written.join(", ");
}
