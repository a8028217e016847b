/**
 * `npm run holds -- list|accept TOOL [--pin PIN] [--env NAME] [--local]
 * [--origin URL]`: the tools `TOOL_CHANGES=hold` holds, and their acceptance
 * (docs/rules.md, "Changed definitions"), over the tenant's `TOOL_MAP` with
 * wrangler's KV commands: `--env NAME` reads the tenant's namespace at
 * Cloudflare, `--local` what `wrangler dev` keeps on this machine (of the top
 * level, or of `--env NAME`).
 *
 * The origin's map notes the definitions some caller is held on (its `held`,
 * toolmap/stored-map.ts); accepting one writes its accept key
 * (`v2:<origin>:accept:<pin>/<tool fingerprint>`, its value the tool's
 * original name), which the proxy reads at the next listing that shows it.
 * The key names the tool by a 32-bit fingerprint of its name, which an origin
 * can give another tool held on the same definition: here as in the proxy,
 * the value decides, and one key accepts one of them at a time.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { originUrlOf } from "../src/config";
import { PROFILE_NAMES } from "../src/names/profiles";
import { profileOf } from "../src/schemas/profile";
import { acceptCommand, acceptKey, changedParts } from "../src/toolmap/definition-pins";
import { toolMapScopes } from "../src/toolmap/isolate-memory";
import { decodeMap, laterFormat, mapKey, type StoredMap } from "../src/toolmap/stored-map";
import { argumentsOf, refuse, runCommand } from "./lib/command";
import { CONFIG_PATH, labelOf, readEnvironment } from "./lib/environments";
import { printable, printableJson } from "./lib/terminal";

interface Where {
  env: string | undefined;
  local: boolean;
  configPath: string;
}

/**
 * What `wrangler kv` may print, at most: a value as long as KV keeps one (25 MiB), and room for
 * the rest. Node reads a process's output no further than 1 MiB unless told, and the map of a
 * server of thousands of tools is longer.
 */
const MAX_PRINTED = 32 * 1024 * 1024;

/**
 * `wrangler kv …` on the tenant's TOOL_MAP, where `where` says; its stdout. With `maxBytes`,
 * `undefined` where it printed more.
 */
function kv(where: Where, args: string[]): string;
function kv(where: Where, args: string[], maxBytes: number): string | undefined;
function kv(where: Where, args: string[], maxBytes?: number): string | undefined {
  const run = spawnSync(
    "wrangler",
    [
      "kv",
      ...args,
      "--binding",
      "TOOL_MAP",
      "--config",
      where.configPath,
      ...(where.env === undefined ? [] : ["--env", where.env]),
      where.local ? "--local" : "--remote",
    ],
    { encoding: "utf8", maxBuffer: maxBytes ?? MAX_PRINTED },
  );
  const tooLong = (run.error as NodeJS.ErrnoException | undefined)?.code === "ENOBUFS";
  if (tooLong && maxBytes !== undefined) return undefined;
  if (tooLong) refuse(`wrangler kv ${args[0]} ${args[1]} printed more than ${MAX_PRINTED} bytes`);
  if (run.status !== 0) refuse(`wrangler kv ${args[0]} ${args[1]} failed:\n${run.stderr}`);
  return run.stdout;
}

/** The origin whose map is read: its KV scope, its host (for what the command says), whether `--origin` gave it. */
interface Origin {
  scope: string;
  host: string;
  given: boolean;
}

/**
 * The origin's KV scope, from its ORIGIN_URL in wrangler.toml or `--origin`:
 * all of the settings the map's key needs (a tenant's secrets, which gate
 * and broker mode need, are at Cloudflare and not read here).
 */
async function originOf(where: Where, origin: string | undefined): Promise<Origin> {
  const environment = readEnvironment(where.env, { configPath: where.configPath });
  if (environment.error !== undefined) refuse(environment.error);
  const read = originUrlOf(origin ?? environment.env.ORIGIN_URL);
  if ("problem" in read) {
    refuse(
      origin === undefined
        ? `ORIGIN_URL of ${labelOf(where.env)} ${read.problem}; with a secret ORIGIN_URL, give it with --origin URL`
        : `--origin URL ${read.problem}`,
    );
  }
  // The scope is the origin's alone: any profile's names give it.
  const names = profileOf(PROFILE_NAMES[0]).names;
  const scope = (await toolMapScopes(read.url, names)).origin;
  return { scope, host: read.url.host, given: origin !== undefined };
}

/**
 * The origin's map, or none when the origin has no map there yet (wrangler then prints no JSON);
 * refused when a later version wrote it, whose held tools this one cannot read.
 */
function readMap(where: Where, scope: string): StoredMap | undefined {
  const text = kv(where, ["key", "get", mapKey(scope)]);
  const later = laterFormat(text);
  if (later !== undefined) {
    refuse(
      `The origin's map in ${labelOf(where.env)} is a later version's (format ${later}): run npm run holds from that version.`,
    );
  }
  return decodeMap(text);
}

/** The accept keys written whose names start with `prefix` (`<scope>:accept:` for all of them). */
function acceptKeys(where: Where, prefix: string): Set<string> {
  const listed = JSON.parse(kv(where, ["key", "list", "--prefix", prefix])) as Array<{
    name: string;
  }>;
  return new Set(listed.map(({ name }) => name));
}

/**
 * Which of `tools`, the held tools whose accept key is `key` (one written), the key's value
 * names, as the proxy reads it: the name, and nothing else. Read no further than the longest
 * of their names: a longer value names none of them.
 */
function acceptedOf(where: Where, key: string, tools: readonly string[]): string | undefined {
  const longest = Math.max(...tools.map((tool) => Buffer.byteLength(tool)));
  const value = kv(where, ["key", "get", key], longest);
  return tools.find((tool) => tool === value);
}

/**
 * The tools held on `pin` whose accept key is `key`: more than one where an origin named them to
 * give their names the same 32-bit fingerprint, and one key accepts one of them.
 */
const sharingKey = (map: StoredMap, scope: string, pin: string, key: string) =>
  [...map.held]
    .filter(([tool, pins]) => pins.includes(pin) && acceptKey(scope, pin, tool) === key)
    .map(([tool]) => tool);

/** Accept keys whose value `list` reads, a `wrangler kv` process each: the others are said unread. */
const MAX_VALUE_READS = 10;

/**
 * What `list` says of a held definition of `original`: accepted only where its accept key's value
 * is its name. `accepts`: the tool held there that the value names (`acceptedOf`), `undefined`
 * where there is no key or it names none, `false` where the key is written and not read.
 */
function stateOf(original: string, accepts: string | false | undefined, command: string): string {
  if (accepts === original) return "accepted, taken at the next listing that shows it";
  if (accepts === false) {
    return `an accept key is written, not read (list reads ${MAX_VALUE_READS}): accept: ${command}`;
  }
  if (accepts === undefined) return `accept: ${command}`;
  const other = printableJson(accepts);
  return `not accepted: the accept key it shares with ${other} (their names' 32-bit fingerprint) accepts that tool; once list no longer shows ${other} held on this definition, accept: ${command}`;
}

function list(where: Where, scope: string): void {
  const map = readMap(where, scope);
  if (!map || map.held.size === 0) {
    console.log(`${labelOf(where.env)}: no tool is held.`);
    return;
  }
  const written = acceptKeys(where, `${scope}:accept:`);
  const read = new Map<string, string | undefined>();
  const acceptsOf = (key: string, pin: string) => {
    if (!written.has(key)) return undefined;
    if (!read.has(key) && read.size < MAX_VALUE_READS) {
      read.set(key, acceptedOf(where, key, sharingKey(map, scope, pin, key)));
    }
    return read.has(key) ? read.get(key) : false;
  };
  console.log(`${labelOf(where.env)}: ${map.held.size} held tool${map.held.size === 1 ? "" : "s"}`);
  for (const [original, pins] of map.held) {
    const pinned = map.tools.get(original)?.pin;
    for (const pin of pins) {
      const changed = pinned === undefined ? [] : changedParts(pinned, pin);
      const accepts = acceptsOf(acceptKey(scope, pin, original), pin);
      const state = stateOf(
        original,
        accepts,
        acceptCommand(pin, original, where.env, where.local),
      );
      // The origin's name: no control character of it reaches the terminal.
      console.log(
        `  ${printableJson(original)}  changed: ${changed.join(", ") || "-"}  pin: ${pin}`,
      );
      console.log(`    ${printable(state)}`);
    }
  }
}

function accept(where: Where, origin: Origin, original: string, pin: string | undefined): void {
  const { scope } = origin;
  const map = readMap(where, scope);
  // The name pasted from list or a log line may be the origin's, control characters and all.
  const name = printableJson(original);
  const held = map?.held.get(original) ?? [];
  if (!map || held.length === 0) {
    // The accept command a log line gives names no origin: a proxy started with another
    // `ORIGIN_URL` than wrangler.toml's held it in another map.
    const another = origin.given
      ? "."
      : "; for a proxy in front of another origin (wrangler dev --var ORIGIN_URL:URL), give it with --origin URL.";
    refuse(
      `${name} is not held in ${labelOf(where.env)} for the origin ${printable(origin.host)}${another}`,
    );
  }
  if (pin !== undefined && !held.includes(pin)) {
    refuse(`${name} is not held on that definition; held: ${held.join(", ")}`);
  }
  if (pin === undefined && held.length > 1) {
    refuse(
      `${name} is held on ${held.length} definitions: accept one with --pin (npm run holds -- list shows them).`,
    );
  }
  const accepted = pin ?? (held[0] as string);
  const key = acceptKey(scope, accepted, original);
  // A key of a tool no longer held there accepts no one: written over. One another held tool's
  // value is that tool's acceptance, which the proxy has not taken yet.
  const holder = acceptKeys(where, key).has(key)
    ? acceptedOf(where, key, sharingKey(map, scope, accepted, key))
    : undefined;
  if (holder === original) {
    console.log(
      `${name} is accepted at ${accepted} already: the proxy lists it again from the next listing that shows that definition.`,
    );
    return;
  }
  if (holder !== undefined) {
    const other = printableJson(holder);
    refuse(
      `Not accepted: ${name} shares its accept key at ${accepted} with ${other} (their names' 32-bit fingerprint), and the key accepts ${other}, held on that definition too; one key accepts one tool. Let the proxy take ${other}'s acceptance at its next listing (npm run holds -- list then no longer shows ${other} held on ${accepted}), then accept ${name} again.`,
    );
  }
  // The name from a file: given as an argument, wrangler reads one such as `--path=…` as its option.
  const dir = mkdtempSync(join(tmpdir(), "holds-"));
  try {
    const value = join(dir, "original");
    writeFileSync(value, original);
    kv(where, ["key", "put", key, "--path", value]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `Accepted ${name} at ${accepted}: the proxy lists it again from the next listing that shows that definition, within a minute (KV may take a minute more elsewhere).`,
  );
}

const USAGE =
  "Usage: npm run holds -- list|accept TOOL [--pin PIN] [--env NAME] [--local] [--origin URL]";

/** `npm run holds -- …argv`. */
export async function holds(argv: string[]): Promise<void> {
  const { values, positionals } = argumentsOf(
    {
      args: argv,
      allowPositionals: true,
      options: {
        env: { type: "string", short: "e" },
        local: { type: "boolean", default: false },
        pin: { type: "string" },
        origin: { type: "string" },
        config: { type: "string", short: "c", default: CONFIG_PATH },
      },
    },
    USAGE,
  );
  const [command, tool, ...rest] = positionals;
  const where: Where = { env: values.env, local: values.local, configPath: values.config };
  if (where.env === undefined && !where.local) {
    refuse(
      "Say where: --env NAME (a tenant at Cloudflare), --local (wrangler dev on this machine), or both.",
    );
  }
  const origin = await originOf(where, values.origin);
  if (command === "list" && tool === undefined) list(where, origin.scope);
  else if (command === "accept" && tool !== undefined && rest.length === 0) {
    accept(where, origin, tool, values.pin);
  } else refuse(USAGE);
}

if (import.meta.main) await runCommand(() => holds(process.argv.slice(2)));
