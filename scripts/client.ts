/**
 * `npm run client -- list URL` and `npm run client -- call URL TOOL
 * [KEY=VALUE ...]`: the official MCP client (SDK 2.x, the dev dependency the
 * tests use) against a proxy or an origin, for README's quickstart: the
 * version package-lock.json pins, where a client fetched with `npx` picks one
 * of its own (Inspector 0.15.0's CLI rewrote any URL not ending in `/mcp`, so
 * `/mcp/gemini` showed the `openai` profile's names).
 *
 * A VALUE that reads as JSON is sent as that JSON (`19.5`, `{"a":1}`), any
 * other as the string it is, as the Inspector's `--tool-arg` reads it.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { printable, printableJson } from "./lib/terminal";

/** Pages of a listing read at most, as the proxy reads at most 50 itself. */
const MAX_PAGES = 100;

const USAGE = "Usage: npm run client -- list URL | call URL TOOL [KEY=VALUE ...]";

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

/** `KEY=VALUE` arguments as a tool call's arguments. */
export function toolArguments(pairs: readonly string[]): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    if (at <= 0) fail(`${pair}: an argument is KEY=VALUE.\n${USAGE}`);
    const text = pair.slice(at + 1);
    let value: unknown = text;
    try {
      value = JSON.parse(text);
    } catch {}
    Object.defineProperty(args, pair.slice(0, at), { value, enumerable: true, writable: true });
  }
  return args;
}

async function main(argv: string[]): Promise<void> {
  const [command, url, tool, ...pairs] = argv;
  const listing = command === "list" && tool === undefined;
  if (url === undefined || !URL.canParse(url) || !(listing || (command === "call" && tool))) {
    fail(USAGE);
  }
  const args = listing ? {} : toolArguments(pairs);
  const client = new Client({ name: "mcp-edge-rewriter (npm run client)", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    if (listing) {
      // Every page: the listing as a model would be given it.
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor });
        for (const { name, description } of page.tools) {
          // The origin's words: no control character of theirs reaches the terminal.
          const line = description ? `${name}: ${description.split("\n")[0]}` : name;
          console.log(printable(line));
        }
        cursor = page.nextCursor;
      } while (cursor !== undefined && ++pages < MAX_PAGES);
    } else {
      const result = await client.callTool({ name: tool as string, arguments: args });
      console.log(printableJson(result));
      if (result.isError) process.exitCode = 1;
    }
  } finally {
    await client.close();
  }
}

if (import.meta.main) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    // An error's message may quote what the server answered: its lines, no control character.
    // fetch says only "fetch failed": why (a refused connection, DNS) is its cause.
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : undefined;
    const said = error instanceof Error ? error.message : String(error);
    const message = cause ? `${said}: ${cause.message}` : said;
    fail(message.split("\n").map(printable).join("\n"));
  });
}
