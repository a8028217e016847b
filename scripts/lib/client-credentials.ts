/**
 * What `npm run client` sends as the operator's credentials, and keeps off
 * the terminal: `--header "Name: value"` lines, sent to the MCP server's own
 * origin only (never to an authorization server on another host, where a
 * relayed origin's sign-in goes), and every secret the command holds
 * (those values, the sign-in's tokens, code and verifier), hidden from
 * whatever it prints, the server's words included: a server may echo a
 * request's headers back in an error or a tool's result.
 */
import { refuse } from "./command";

/** RFC 9110 §5.6.2: a header's name is a token. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Visible ASCII, spaces and tabs within: what every HTTP stack takes as a header's value. */
const FIELD_VALUE = /^[\x21-\x7e]([\x20-\x7e\t]*[\x21-\x7e])?$/;

/**
 * A value shorter than this is not looked for in what is printed: hiding
 * every `on` of a listing would hide nothing a credential is, and garble
 * everything else.
 */
const SHORTEST_HIDDEN = 8;

/** The secrets of one run of the command, in memory only. */
export class Secrets {
  private readonly values = new Set<string>();

  add(value: string | undefined): void {
    if (value !== undefined && value.length >= SHORTEST_HIDDEN) this.values.add(value);
  }

  /** `text` with each secret, as written or as a JSON string writes it, shown as `[hidden]`. */
  hide(text: string): string {
    let shown = text;
    for (const value of this.values) {
      shown = shown.replaceAll(value, "[hidden]");
      shown = shown.replaceAll(JSON.stringify(value).slice(1, -1), "[hidden]");
    }
    return shown;
  }
}

/**
 * `--header` lines as headers, each value (and each word of it) among
 * `secrets`. A line that is
 * no header is refused by its name alone (its value is never printed).
 */
export function headerLines(lines: readonly string[], secrets: Secrets): Headers {
  const headers = new Headers();
  for (const line of lines) {
    const at = line.indexOf(":");
    const name = (at < 0 ? line : line.slice(0, at)).trim();
    if (at <= 0 || !TOKEN.test(name)) {
      refuse(
        `--header takes "Name: value", a name of letters, digits and !#$%&'*+.^_\`|~- before the colon.`,
      );
    }
    const value = line.slice(at + 1).trim();
    if (!FIELD_VALUE.test(value)) {
      refuse(
        `--header ${name}: a value is printable ASCII, not empty (spaces and tabs only between its characters); its value is not shown.`,
      );
    }
    // And each word of it: an origin echoes the token of `Bearer <token>`, not the scheme.
    for (const part of [value, ...value.split(/[ \t]+/)]) secrets.add(part);
    headers.append(name, value);
  }
  return headers;
}

/**
 * `fetch` that adds `headers` to each request for `server`'s origin (its
 * scheme, host and port), where the request does not set that header
 * itself: the SDK's own (`Authorization` once signed in, `Content-Type`,
 * MCP's) are the SDK's.
 */
export function sendingHeaders(headers: Headers, server: URL): typeof fetch {
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input);
    if (url.origin !== server.origin || [...headers].length === 0) return fetch(input, init);
    const sent = new Headers(init?.headers ?? (input instanceof Request ? input.headers : {}));
    for (const [name, value] of headers) if (!sent.has(name)) sent.set(name, value);
    return fetch(input, { ...init, headers: sent });
  };
}
