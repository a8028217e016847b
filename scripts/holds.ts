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
import { decodeMap, mapKey, type StoredMap } from "../src/toolmap/stored-map";
import { argumentsOf, refuse, runCommand } from "./lib/command";
import { CONFIG_PATH, labelOf, readEnvironment } from "./lib/environments";
import { printable, printableJson } from "./lib/terminal";

interface Where {
  env: string | undefined;
  local: boolean;
  configPath: string;
}

/** `wrangler kv …` on the tenant's TOOL_MAP, where `where` says; its stdout. */
function kv(where: Where, args: string[]): string {
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
    { encoding: "utf8" },
  );
  if (run.status !== 0) refuse(`wrangler kv ${args[0]} ${args[1]} failed:\n${run.stderr}`);
  return run.stdout;
}

/**
 * The origin's KV scope, from its ORIGIN_URL in wrangler.toml or `--origin`:
 * all of the settings the map's key needs (a tenant's secrets, which gate
 * and broker mode need, are at Cloudflare and not read here).
 */
async function scopeOf(where: Where, origin: string | undefined): Promise<string> {
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
  return (await toolMapScopes(read.url, names)).origin;
}

/** The origin's map, or none when the origin has no map there yet (wrangler then prints no JSON). */
function readMap(where: Where, scope: string): StoredMap | undefined {
  return decodeMap(kv(where, ["key", "get", mapKey(scope)]));
}

/** Accept keys written and not yet taken by a listing. */
function pendingAccepts(where: Where, scope: string): Set<string> {
  const listed = JSON.parse(kv(where, ["key", "list", "--prefix", `${scope}:accept:`])) as Array<{
    name: string;
  }>;
  return new Set(listed.map(({ name }) => name));
}

function list(where: Where, scope: string): void {
  const map = readMap(where, scope);
  if (!map || map.held.size === 0) {
    console.log(`${labelOf(where.env)}: no tool is held.`);
    return;
  }
  const pending = pendingAccepts(where, scope);
  console.log(`${labelOf(where.env)}: ${map.held.size} held tool${map.held.size === 1 ? "" : "s"}`);
  for (const [original, pins] of map.held) {
    const pinned = map.tools.get(original)?.pin;
    for (const pin of pins) {
      const changed = pinned === undefined ? [] : changedParts(pinned, pin);
      const state = pending.has(acceptKey(scope, pin, original))
        ? "accepted, taken at the next listing that shows it"
        : `accept: ${acceptCommand(pin, original, where.env, where.local)}`;
      // The origin's name: no control character of it reaches the terminal.
      console.log(
        `  ${printableJson(original)}  changed: ${changed.join(", ") || "-"}  pin: ${pin}`,
      );
      console.log(`    ${printable(state)}`);
    }
  }
}

function accept(where: Where, scope: string, original: string, pin: string | undefined): void {
  const held = readMap(where, scope)?.held.get(original) ?? [];
  if (held.length === 0)
    refuse(`${JSON.stringify(original)} is not held in ${labelOf(where.env)}.`);
  if (pin !== undefined && !held.includes(pin)) {
    refuse(`${JSON.stringify(original)} is not held on that definition; held: ${held.join(", ")}`);
  }
  if (pin === undefined && held.length > 1) {
    refuse(
      `${JSON.stringify(original)} is held on ${held.length} definitions: accept one with --pin (npm run holds -- list shows them).`,
    );
  }
  const accepted = pin ?? (held[0] as string);
  // The name from a file: given as an argument, wrangler reads one such as `--path=…` as its option.
  const dir = mkdtempSync(join(tmpdir(), "holds-"));
  try {
    const value = join(dir, "original");
    writeFileSync(value, original);
    kv(where, ["key", "put", acceptKey(scope, accepted, original), "--path", value]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `Accepted ${JSON.stringify(original)} at ${accepted}: the proxy lists it again from the next listing that shows that definition, within a minute (KV may take a minute more elsewhere).`,
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
  const scope = await scopeOf(where, values.origin);
  if (command === "list" && tool === undefined) list(where, scope);
  else if (command === "accept" && tool !== undefined && rest.length === 0) {
    accept(where, scope, tool, values.pin);
  } else refuse(USAGE);
}

if (import.meta.main) await runCommand(() => holds(process.argv.slice(2)));
