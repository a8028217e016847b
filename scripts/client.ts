/**
 * `npm run client -- list URL` and `npm run client -- call URL TOOL
 * [KEY=VALUE ...]`: the official MCP client (SDK 2.x, the dev dependency the
 * tests use) against a proxy or an origin, for README's quickstart: the
 * version package-lock.json pins, where a client fetched with `npx` picks one
 * of its own (Inspector 0.15.0's CLI rewrote any URL not ending in `/mcp`, so
 * `/mcp/gemini` showed the `openai` profile's names).
 *
 * A call is made after the session's listing, as a model's client makes it:
 * what the proxy answers from a caller's own listing (the fix-it text of
 * `ARGUMENT_VALIDATION=enforce`) is then what a model would read.
 *
 * A VALUE that reads as JSON is sent as that JSON (`19.5`, `{"a":1}`), any
 * other as the string it is, as the Inspector's `--tool-arg` reads it.
 *
 * What a signed-in user sees: `--header "Name: value"` sends a credential
 * (relay mode in front of an origin that takes a bearer token), and
 * `--sign-in` signs in as a user would, in a browser, with the SDK's own
 * OAuth flow (lib/loopback-sign-in.ts). No credential is printed or kept.
 */
import {
  auth,
  Client,
  InsufficientScopeError,
  SdkHttpError,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { closestName } from "../src/args/fix-it-text";
import { namedScopes } from "../src/auth/scope-tokens";
import { headerLines, Secrets, sendingHeaders } from "./lib/client-credentials";
import { argumentsOf, Refused, refuse, runCommand } from "./lib/command";
import { type LoopbackSignIn, loopbackSignIn } from "./lib/loopback-sign-in";
import { printable, printableJson } from "./lib/terminal";

/** Pages of a listing read at most, as the proxy reads at most 50 itself. */
const MAX_PAGES = 100;

/** How long a sign-in waits for the browser by default: time to sign in, not to leave a port open all day. */
const SIGN_IN_SECONDS = 300;
const MAX_SIGN_IN_SECONDS = 3600;

const USAGE = `Usage: npm run client -- list URL | call URL TOOL [KEY=VALUE ...]
Options:
  --header "Name: value"   send this header with every request to URL's origin (repeatable),
                           e.g. "Authorization: Bearer <token>"; its value is never printed
  --sign-in                sign in as a user, in a browser: prints the address to open
  --scope "a b"            with --sign-in: the scopes to ask for (broker and gate mode:
                           origin:<scope> for an origin's own)
  --sign-in-timeout S      with --sign-in: seconds the sign-in waits for the browser (${SIGN_IN_SECONDS})`;

const COMMANDS = ["list", "call"];

/** A command word `npm run client` does not know, named, with the one it is closest to (two edits, any case). */
function unknownCommand(word: string): string {
  const meant = closestName(word, COMMANDS, { fold: (name) => name.toLowerCase(), within: 2 });
  // Quoted as JSON: a control character in the word is written as its escape, not to the terminal.
  const named = `unknown command ${printableJson(word)}`;
  return meant === undefined ? `${named}.` : `${named}; did you mean ${meant}?`;
}

/** `KEY=VALUE` arguments as a tool call's arguments. */
export function toolArguments(pairs: readonly string[]): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    if (at <= 0) refuse(`${pair}: an argument is KEY=VALUE.\n${USAGE}`);
    const text = pair.slice(at + 1);
    let value: unknown = text;
    try {
      value = JSON.parse(text);
    } catch {}
    Object.defineProperty(args, pair.slice(0, at), { value, enumerable: true, writable: true });
  }
  return args;
}

/** `text` quoted for a POSIX shell. */
const shellQuoted = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

/** Why the server refused, and what to run instead; `undefined` for any other error. */
function refusal(error: unknown, sent: Headers, signingIn: boolean): string | undefined {
  if (error instanceof InsufficientScopeError) {
    // What a 403's challenge names is the server's: printed as the proxy's step-up carries it.
    const named = namedScopes(error.requiredScope);
    if (named.length === 0) {
      return "The server refused this request (403 insufficient_scope) and names no scope it needs.";
    }
    const origin = named.some((scope) => scope.startsWith("origin:"))
      ? " In broker and gate mode, origin:<scope> is the origin's own <scope>, which a new sign-in asks the origin for (docs/sign-in.md, More permissions)."
      : "";
    return `The server needs permissions this ${signingIn ? "sign-in" : "credential"} lacks (403 insufficient_scope): ${named.join(" ")}.${origin} Sign in for them: --sign-in --scope ${shellQuoted(named.join(" "))}`;
  }
  // Signed in, a 401 is the SDK's to say ("after re-authentication"): the sign-in did not take.
  if (signingIn || !(error instanceof SdkHttpError && error.status === 401)) return undefined;
  return sent.has("authorization")
    ? "The server refused the credential sent (401): check the --header Authorization value (not shown), or sign in with --sign-in."
    : 'The server asks for sign-in (401). Sign in as a user with --sign-in (broker or gate mode, or an origin\'s own OAuth in relay mode), or send a credential with --header "Authorization: Bearer <token>" (relay mode, in front of an origin that takes a bearer token).';
}

/**
 * A client connected to `url`: signed in first when `signIn` is given,
 * with `scope` (else as the server's challenge asks), once the user comes
 * back from the address printed.
 */
async function connected(
  url: URL,
  fetch: typeof globalThis.fetch,
  signIn: LoopbackSignIn | undefined,
  scope: string | undefined,
): Promise<Client> {
  const transport = () =>
    new StreamableHTTPClientTransport(url, {
      fetch,
      ...(signIn ? { authProvider: signIn.provider } : {}),
      // One sign-in a run: a scope the sign-in lacks is said, and asked for with --scope.
      onInsufficientScope: "throw",
    });
  const attempt = async () => {
    const client = new Client({ name: "mcp-edge-rewriter (npm run client)", version: "1.0.0" });
    await client.connect(transport());
    return client;
  };
  if (signIn && scope !== undefined) {
    // The SDK asks for what the server's challenge names; the scopes asked for here are the operator's.
    await auth(signIn.provider, { serverUrl: url, scope, fetchFn: fetch });
  } else {
    try {
      return await attempt();
    } catch (error) {
      if (!(signIn?.started && error instanceof UnauthorizedError)) throw error;
    }
  }
  if (signIn?.started) {
    await transport().finishAuth(await signIn.callback());
    console.error("Signed in.");
  }
  return attempt();
}

/** What the command was asked, read from its arguments; refused with its usage when they say nothing it does. */
interface Asked {
  url: URL;
  /** The tool to call, and its arguments; none: list. */
  call?: { tool: string; args: Record<string, unknown> };
  headers: Headers;
  signIn?: { seconds: number; scope?: string };
}

function asked(argv: string[], secrets: Secrets): Asked {
  const { values, positionals } = argumentsOf(
    {
      args: argv,
      allowPositionals: true,
      options: {
        header: { type: "string", multiple: true },
        "sign-in": { type: "boolean" },
        scope: { type: "string" },
        "sign-in-timeout": { type: "string" },
      },
    },
    USAGE,
  );
  const [command, target, tool, ...pairs] = positionals;
  if (command !== undefined && !COMMANDS.includes(command))
    refuse(`${unknownCommand(command)}\n${USAGE}`);
  const listing = command === "list" && tool === undefined;
  if (target === undefined || !URL.canParse(target) || !(listing || (command === "call" && tool))) {
    refuse(USAGE);
  }
  // `localhost:8787/mcp` is a URL too, of the scheme `localhost:`, which fetch says nothing useful of.
  if (!["http:", "https:"].includes(new URL(target).protocol)) {
    refuse(`${target}: a server's URL begins http:// or https://.\n${USAGE}`);
  }
  const headers = headerLines(values.header ?? [], secrets);
  const signingIn = values["sign-in"] === true;
  if (!signingIn && (values.scope !== undefined || values["sign-in-timeout"] !== undefined)) {
    refuse(`--scope and --sign-in-timeout go with --sign-in.\n${USAGE}`);
  }
  if (signingIn && headers.has("authorization")) {
    refuse(
      "--sign-in sends the sign-in's token in Authorization: leave --header Authorization out.",
    );
  }
  const seconds = Number(values["sign-in-timeout"] ?? SIGN_IN_SECONDS);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_SIGN_IN_SECONDS) {
    refuse(`--sign-in-timeout: whole seconds, 1 to ${MAX_SIGN_IN_SECONDS}.`);
  }
  return {
    url: new URL(target),
    ...(tool === undefined ? {} : { call: { tool, args: toolArguments(pairs) } }),
    headers,
    ...(signingIn ? { signIn: { seconds, ...(values.scope ? { scope: values.scope } : {}) } } : {}),
  };
}

async function run({ url, call, headers, signIn }: Asked, secrets: Secrets) {
  const loopback = signIn ? await loopbackSignIn(secrets, signIn.seconds) : undefined;
  try {
    const client = await connected(url, sendingHeaders(headers, url), loopback, signIn?.scope);
    try {
      // Every page: the listing as a model would be given it. A call comes after it, as a
      // model's does: the proxy answers some calls from the caller's own listing, its
      // session's (ARGUMENT_VALIDATION=enforce's fix-it text), and forwards them without one.
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor });
        for (const { name, description } of call === undefined ? page.tools : []) {
          // The origin's words: no control character of theirs reaches the terminal.
          const line = description ? `${name}: ${description.split("\n")[0]}` : name;
          console.log(printable(secrets.hide(line)));
        }
        cursor = page.nextCursor;
      } while (cursor !== undefined && ++pages < MAX_PAGES);
      if (call !== undefined) {
        const result = await client.callTool({ name: call.tool, arguments: call.args });
        console.log(secrets.hide(printableJson(result)));
        if (result.isError) process.exitCode = 1;
      }
    } finally {
      await client.close();
    }
  } catch (error) {
    const said = refusal(error, headers, signIn !== undefined);
    if (said !== undefined) refuse(said);
    throw error;
  } finally {
    loopback?.close();
  }
}

/** `npm run client -- …argv`: what it cannot do said in a line, never a credential. */
export async function client(argv: string[]): Promise<void> {
  const secrets = new Secrets();
  const request = asked(argv, secrets);
  try {
    await run(request, secrets);
  } catch (error) {
    if (error instanceof Refused) refuse(secrets.hide(error.message));
    // An error's message may quote what the server answered: its lines, no control character.
    // fetch says only "fetch failed": why (a refused connection, DNS) is its cause.
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : undefined;
    const said = error instanceof Error ? error.message : String(error);
    const message = cause ? `${said}: ${cause.message}` : said;
    refuse(secrets.hide(message).split("\n").map(printable).join("\n"));
  }
}

if (import.meta.main) await runCommand(() => client(process.argv.slice(2)));
