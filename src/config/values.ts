/**
 * What one setting may hold: the valibot schemas each setting is read with,
 * each telling a problem by what is wrong and never by the value (a setting
 * may carry a credential).
 */
import * as v from "valibot";
import { canonicalPath } from "../canonical-path";
import { unpassable } from "../protocol/header-names";

/**
 * `text` with its ASCII capitals in lower case, and nothing else changed.
 * What names an account (an email, a domain, an organization) is compared
 * this way: `toLowerCase` folds other letters too (U+212A KELVIN SIGN to
 * "k", U+0130 to "i̇"), so an address that is another mailbox would equal a
 * listed one.
 */
export const lowerAscii = (text: string) => text.replace(/[A-Z]+/g, (run) => run.toLowerCase());

/**
 * Whether `hostname` (a URL's, IPv6 in brackets) is this computer's: where
 * plain http is allowed (a local origin or identity provider under `wrangler
 * dev`), and where a sign-in page may send a browser unasked.
 */
export const isLoopbackHost = (hostname: string) =>
  /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/.test(hostname);

/** An email address as gate mode compares it: trimmed, ASCII capitals in lower case. */
export const emailKey = (email: string) => lowerAscii(email.trim());

/**
 * A count given as a string (wrangler vars) or a number (TOML integers). A
 * string is decimal digits: `Number` reads "" as 0, "0x10" as 16 and "1e2" as 100.
 */
export const wholeNumber = (unit: string, minimum: number, maximum = Number.MAX_SAFE_INTEGER) => {
  const message = `must be a whole number of ${unit}`;
  return v.pipe(
    v.union([v.pipe(v.string(), v.trim(), v.regex(/^-?\d+$/, message)), v.number()], message),
    v.transform(Number),
    v.integer(message),
    v.minValue(
      minimum,
      `must be at least ${minimum} ${minimum === 1 ? unit.replace(/s$/, "") : unit}`,
    ),
    v.maxValue(maximum, `must be at most ${maximum} ${unit}`),
  );
};

/**
 * The least share `rate` takes besides 0: what a share stands for is 1 ÷ it
 * (analytics/recorder.ts), which nearer 0 grows past any count.
 */
const MIN_RATE = 0.0001;

/** A share from 0 to 1, given as a string of decimal digits (wrangler vars) or a number (TOML floats). */
export const rate = () => {
  const message = `must be 0, or a number from ${MIN_RATE} to 1`;
  const decimal = /^-?(?:\d+(?:\.\d*)?|\.\d+)$/;
  return v.pipe(
    v.union([v.pipe(v.string(), v.trim(), v.regex(decimal, message)), v.number()], message),
    v.transform(Number),
    v.number(message),
    v.check((share) => share === 0 || (share >= MIN_RATE && share <= 1), message),
  );
};

/**
 * The largest `MAX_BODY_BYTES`: half of what an isolate's requests may hold
 * at once of what they read (transport/read-bounded.ts `MAX_HELD_BYTES`), so
 * that a body at the limit can be taken beside another.
 */
export const MAX_BODY_LIMIT = 16 * 1024 * 1024;

/**
 * The largest `MAX_BATCH_MESSAGES`. Batches are protocol 2025-03-26's alone
 * (2025-06-18 removed them) and no MCP SDK's client sends them; each message
 * may cost a search, a validation or a listing named again.
 */
export const MAX_BATCH_LIMIT = 256;

/**
 * The bounds of `MAX_LOCAL_ANSWER_BYTES`: at most the bound of one message the
 * proxy rewrites (transport/read-bounded.ts `MAX_REWRITE_BYTES`); at least
 * room for the short answer to every call of the largest batch
 * (rewrite/local-answers.ts), so that a batch is refused only for ids of
 * unusual length.
 */
export const MIN_LOCAL_ANSWER_LIMIT = 128 * 1024;
export const MAX_LOCAL_ANSWER_LIMIT = 16 * 1024 * 1024;

/**
 * What a check without words of its own says: what it expected, never what it
 * received (valibot's own message quotes a number or a boolean: a secret
 * written as a TOML var).
 */
export const expectedOnly = (issue: v.BaseIssue<unknown>) =>
  issue.expected === "string" ? "must be text (a string)" : `must be ${issue.expected ?? "valid"}`;

/** One of `options`, with no space around it (as numbers, paths and URLs are read). */
export const picklist = <const T extends readonly [string, ...string[]]>(options: T) => {
  const message = `must be one of ${options.join(", ")}`;
  return v.pipe(v.string(message), v.trim(), v.picklist(options, message));
};

export const oneOf = <const T extends readonly [string, ...string[]]>(
  options: T,
  fallback: T[number],
) => v.optional(picklist(options), fallback);

/**
 * An absolute http(s) URL, as a `URL`; `missing`: what an absent one is
 * told. A number or table there is told what it is not, never "missing".
 * A user name or password in it is refused: fetch makes no Authorization
 * header of it, and a URL's `origin` drops it without a word, so it would be
 * a credential kept in a var that does nothing.
 */
export const httpUrl = (missing: string) =>
  v.pipe(
    v.string((issue) =>
      issue.input === undefined ? missing : "must be a URL in quotes, not a number or a table",
    ),
    v.trim(),
    v.check((value) => URL.canParse(value), "must be an absolute http:// or https:// URL"),
    v.transform((value) => new URL(value)),
    v.check(
      (url) => url.protocol === "http:" || url.protocol === "https:",
      "must be an absolute http:// or https:// URL",
    ),
    v.check(
      (url) => url.username === "" && url.password === "",
      "must hold no user name or password (user:pass@ before the host)",
    ),
  );

/** An authorization server's issuer identifier (RFC 8414 §2): an http(s) URL with no query or fragment. */
export const issuerUrl = v.optional(
  v.pipe(
    httpUrl("must be a URL"),
    v.check(
      (url) => url.search === "" && url.hash === "",
      "must be the authorization server's issuer, like https://auth.example.com (no query or fragment)",
    ),
  ),
);

/** The proxy's public origin: scheme, host and port, nothing more. */
export const publicOrigin = v.optional(
  v.pipe(
    httpUrl("must be a URL"),
    v.check(
      (url) => url.pathname === "/" && url.search === "" && url.hash === "",
      "must be the proxy's public origin only, like https://mcp.example.com (no path)",
    ),
    v.transform((url) => url.origin),
  ),
);

/** Paths the proxy serves itself; `MCP_PATH` may be none of them, nor lie under one. */
const FIXED_ROUTES = ["/healthz", "/readyz", "/authorize", "/oauth", "/.well-known"];

export const path = v.optional(
  v.pipe(
    v.string(),
    v.trim(),
    v.startsWith("/", "must start with /"),
    v.regex(/^\/[^?#]*[^/?#]$/, "must be a plain path like /mcp: no query, no trailing /"),
    v.check((value) => {
      const canonical = canonicalPath(value);
      return canonical.kind === "canonical" && canonical.path === value;
    }, "must have one reading: no %-escapes of letters, digits or -._~, no . or .. or empty segments"),
    // A request's path arrives as a URL writes it: `/café` as `/caf%C3%A9`, never equal to it.
    v.check(
      (value) => new URL(value, "http://h").pathname === value,
      'must be written as a URL writes it: a space, "<>`{} and each character outside ASCII %-escaped (/caf%C3%A9 for /café)',
    ),
    v.check(
      (value) => !FIXED_ROUTES.some((route) => value === route || value.startsWith(`${route}/`)),
      `must not be one of the proxy's own routes (${FIXED_ROUTES.join(", ")}) or under one`,
    ),
  ),
  "/mcp",
);

/** Whether `value` is a binding with `method` (a Secrets Store secret's or a KV namespace's `get`). */
export const hasMethod = (value: unknown, method: string) =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as Record<string, unknown>)[method] === "function";

/**
 * Whether `value` answers any method's name: an RPC stub, as a service binding is, and as
 * `wrangler dev` binds a Secrets Store secret (a service of its own entrypoint). Nothing can be
 * told of it by the methods it has.
 */
const answersAnyName = (value: unknown) => hasMethod(value, "noMethodOfAnyBindingIsCalledSo");

/**
 * Whether `value` is a KV namespace binding: its `get` beside `getWithMetadata`. A Durable
 * Object namespace and an R2 bucket have a `get` of their own, and no `getWithMetadata`; an
 * RPC stub has every method, and a Secrets Store secret's would answer any key with its one secret.
 */
export const isKvNamespace = (value: unknown) =>
  hasMethod(value, "get") && hasMethod(value, "getWithMetadata") && !answersAnyName(value);

/**
 * Whether `value` is a Secrets Store secret binding, whose `get()` reads its one secret: of
 * the other bindings with a `get` (of a key or an id), none of KV's, R2's (`list`), a Durable
 * Object namespace's (`idFromName`) or a Workflow's (`create`); or an RPC stub.
 */
export const isSecretsStoreSecret = (value: unknown) =>
  hasMethod(value, "get") &&
  (answersAnyName(value) || !["list", "idFromName", "create"].some((m) => hasMethod(value, m)));

const NOT_KV = "must be a KV namespace binding ([[kv_namespaces]])";

/** A KV namespace binding; `missing`: what an absent one is told. */
export const kvNamespace = (missing = NOT_KV) =>
  v.custom<KVNamespace>(isKvNamespace, (issue) => (issue.input === undefined ? missing : NOT_KV));

export const secret = v.optional(v.pipe(v.string(), v.trim(), v.nonEmpty("must not be empty")));

/** One `ALLOWED_HOSTS` entry: a hostname, and the one port it is allowed on when it names one. */
export interface AllowedHost {
  hostname: string;
  port?: string;
}

const HOST_ENTRY = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/;

/** Whether an `ALLOWED_HOSTS` entry is its host and port as a URL reads them, the way a request's are. */
function readsAsWritten(entry: string): boolean {
  const [, hostname = "", port] = HOST_ENTRY.exec(entry) ?? [];
  if (port !== undefined && (port.startsWith("0") || Number(port) > 65_535)) return false;
  return URL.canParse(`http://${hostname}`) && new URL(`http://${hostname}`).hostname === hostname;
}

export const hostList = v.optional(
  v.pipe(
    v.string(),
    // Only unset or empty means any host: a list of nothing but commas and spaces is a typo, and
    // must not turn the host check off.
    v.check(
      (value) => value === "" || value.split(",").some((host) => host.trim() !== ""),
      "lists no host: leave it unset, or empty, to answer any host",
    ),
    v.transform((value) =>
      value
        .split(",")
        .map((host) => host.trim().toLowerCase())
        .filter(Boolean),
    ),
    v.check(
      (entries) => entries.every((entry) => HOST_ENTRY.test(entry)),
      "must be hostnames or host:port pairs, separated by commas",
    ),
    // A request's host is read as a URL reads it (transport/allowed-hosts.ts): an entry written
    // otherwise is one no request matches, and every request is refused. Told by its place.
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      const unread = dataset.value.findIndex((entry) => !readsAsWritten(entry));
      if (unread === -1) return;
      addIssue({
        message: `has an entry (number ${unread + 1}) that no request's host reads as: write a host as a URL reads it (127.0.0.1, not 127.1), and a port from 1 to 65535 without leading zeros`,
      });
    }),
    v.transform((entries) =>
      entries.map((entry): AllowedHost => {
        const [, hostname = entry, port] = HOST_ENTRY.exec(entry) ?? [];
        return port === undefined ? { hostname } : { hostname, port };
      }),
    ),
  ),
  "",
);

/**
 * A comma-separated list, each entry trimmed (and lower-cased unless
 * `keepCase`), as a set; at most `maxEntries` entries in `maxChars`
 * characters. A problem with an entry is told by its place in the list,
 * never by what it says.
 */
export function commaList(
  what: string,
  {
    maxEntries,
    maxChars,
    tooLong = `must be at most ${maxChars} characters`,
    keepCase = false,
  }: { maxEntries: number; maxChars: number; tooLong?: string; keepCase?: boolean },
  problemOf: (entry: string) => string | undefined,
) {
  return v.optional(
    v.pipe(
      v.string(`must be ${what} separated by commas`),
      v.maxLength(maxChars, tooLong),
      v.transform((value) =>
        value
          .split(",")
          .map((entry) => (keepCase ? entry.trim() : lowerAscii(entry.trim())))
          .filter(Boolean),
      ),
      v.maxLength(maxEntries, `must list at most ${maxEntries} ${what}`),
      v.rawCheck(({ dataset, addIssue }) => {
        if (!dataset.typed) return;
        for (const [index, entry] of dataset.value.entries()) {
          const problem = problemOf(entry);
          if (problem !== undefined) {
            addIssue({ message: `has an entry (number ${index + 1}) that ${problem}` });
            return;
          }
        }
      }),
      v.transform((entries): ReadonlySet<string> => new Set(entries)),
    ),
    "",
  );
}

/** `PASS_HEADERS`'s bounds: names, and characters a name. */
const MAX_PASS_HEADERS = 32;
const MAX_HEADER_NAME = 64;
/** RFC 9110 §5.1 `token`, in lower case: what a header name may be made of. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;

/** Why `name` (lower case) is no header name; `undefined` when it is one. */
export const notHeaderName = (name: string) =>
  name.length > MAX_HEADER_NAME
    ? `is longer than ${MAX_HEADER_NAME} characters`
    : !HEADER_NAME.test(name)
      ? "is not a header name (letters, digits and !#$%&'*+-.^_`|~)"
      : undefined;

/**
 * The headers broker and gate mode let through besides their own
 * (protocol/header-names.ts `brokered`): names, comma-separated, in any case.
 */
export const passHeaders = commaList(
  "header names",
  {
    maxEntries: MAX_PASS_HEADERS,
    maxChars: MAX_PASS_HEADERS * (MAX_HEADER_NAME + 2),
    tooLong: `must list at most ${MAX_PASS_HEADERS} header names of at most ${MAX_HEADER_NAME} characters`,
  },
  (name) => notHeaderName(name) ?? unpassable(name),
);
