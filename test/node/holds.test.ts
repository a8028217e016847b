/**
 * `npm run holds` as an operator runs it, on `wrangler dev`'s KV in a scratch
 * copy of the repository: a held tool is listed with the command that
 * accepts it, and that command, pasted into a shell as printed, writes the
 * accept key the proxy reads (and runs nothing an origin put in a tool's name).
 */
import { createHash } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { getPlatformProxy } from "wrangler";
import { holds } from "../../scripts/holds";
import { Refused } from "../../scripts/lib/command";
import { acceptKey } from "../../src/toolmap/definition-pins";
import { encodeMap, MAP_FORMAT, type StoredTool } from "../../src/toolmap/stored-map";
import { npmRun, repoCopy, shell } from "./npm-scripts";

const repo = repoCopy();
afterAll(() => repo.remove());

/** The map's scope for wrangler.toml's top-level ORIGIN_URL: `v2:` and SHA-256's first 8 bytes (docs/tool-map.md). */
const SCOPE = `v2:${createHash("sha256").update("http://127.0.0.1:8788/mcp").digest("hex").slice(0, 16)}`;
/** A name a hostile origin may give a tool. */
const TOOL = "it's $(touch pwned)";
const PINNED = "d1/s1/e1/a1/-/-/-";
const HELD = "d2/s1/e2/a1/-/-/-";
/**
 * Two names with the same 32-bit fingerprint, so the same accept key on one pin: what an origin
 * finds in a birthday search (some 65,000 names of each kind), and makes a second tool's definition
 * the one the operator accepts for the first.
 */
const NOTES = "notes_175327";
const WIPE = "wipe_67929";

/**
 * The test's own look at wrangler dev's KV in the copy, as the Worker's binding reads it: in this
 * process (a `wrangler kv` process costs 4 s of CPU), and open only while `use` runs, as the
 * scripts' own wrangler opens it in between.
 */
async function toolMap<T>(use: (kv: KVNamespace) => Promise<T>): Promise<T> {
  const proxy = await getPlatformProxy<{ TOOL_MAP: KVNamespace }>({
    configPath: join(repo.dir, "wrangler.toml"),
    // Where `wrangler dev` and `wrangler kv --local` keep it: beside the copy's wrangler.toml.
    persist: { path: join(repo.dir, ".wrangler", "state", "v3") },
    envFiles: [],
  });
  try {
    return await use(proxy.env.TOOL_MAP);
  } finally {
    await proxy.dispose();
  }
}

/** What `npm run holds -- …argv` prints, asked in this process (a process costs 3 s). */
async function printedBy(argv: string[]): Promise<string> {
  const printed: unknown[] = [];
  const log = vi.spyOn(console, "log").mockImplementation((line) => void printed.push(line));
  try {
    await holds(argv);
  } finally {
    log.mockRestore();
  }
  return printed.join("\n");
}

/** What `list` says of each held tool's definition: `<name as JSON> <pin>` to the line below it. */
function statesIn(listed: string): Map<string, string> {
  const states = new Map<string, string>();
  for (const [, name, pin, state] of listed.matchAll(
    /^ {2}(".*") {2}changed: .* {2}pin: (\S+)\n {4}(.*)$/gm,
  )) {
    states.set(`${name} ${pin}`, `${state}`);
  }
  return states;
}

describe("npm run holds", () => {
  it("lists a held tool with the command that accepts it, which works as pasted", async () => {
    const map = {
      format: 2,
      tools: { [TOOL]: ["s1", 20_000, "s1/e1/a1", "d1", "-/-/-"], other: ["s2", 20_000] },
      chunks: 0,
      held: { [TOOL]: [HELD] },
    };
    await toolMap((kv) => kv.put(`${SCOPE}:map`, JSON.stringify(map)));

    const listed = npmRun("holds", ["list", "--local"], repo.dir);
    expect(listed.status).toBe(0);
    expect(listed.out).toContain("the top level (local development): 1 held tool");
    expect(listed.out).toContain(`${JSON.stringify(TOOL)}  changed: description  pin: ${HELD}`);
    const command = /accept: (npm run holds -- accept .*)$/m.exec(listed.out)?.[1];
    expect(command).toBe(`npm run holds -- accept 'it'\\''s $(touch pwned)' --pin ${HELD} --local`);

    const accepted = shell("sh", ["-c", `${command}`], repo.dir);
    expect(accepted.status).toBe(0);
    expect(accepted.out).toContain(`Accepted ${JSON.stringify(TOOL)} at ${HELD}`);
    expect(existsSync(join(repo.dir, "pwned"))).toBe(false);

    // The key the proxy reads: `<scope>:accept:<pin>/<tool fingerprint>`, the original its value.
    const accepts = await toolMap(async (kv) => {
      const { keys } = await kv.list({ prefix: `${SCOPE}:accept:` });
      return Promise.all(keys.map(async ({ name }) => ({ name, value: await kv.get(name) })));
    });
    expect(accepts).toEqual([
      {
        name: expect.stringMatching(new RegExp(`^${SCOPE}:accept:${HELD}/[0-9a-z]+$`)),
        value: TOOL,
      },
    ]);
  }, 600_000);

  it("lists a held tool of a map larger than a mebibyte, as a server of thousands of tools writes one", async () => {
    // wrangler prints the map whole; a process's output was read no further than Node's default
    // 1 MiB, and such a map's holds were a failure to read it.
    const tools: Record<string, unknown[]> = {};
    for (let i = 0; i < 9_000; i++) {
      tools[`service_${i}.operation_with_a_long_name_${i}`] = [
        "2.1a2b3c4",
        20_000,
        "2.1a2b3c4/5d6e7f8/-",
        "A".repeat(43),
        "-/-/-",
      ];
    }
    tools[TOOL] = ["s1", 20_000, "s1/e1/a1", "d1", "-/-/-"];
    const text = JSON.stringify({ format: 2, tools, chunks: 0, held: { [TOOL]: [HELD] } });
    expect(text.length).toBeGreaterThan(1024 * 1024);
    await toolMap((kv) => kv.put(`${SCOPE}:map`, text));
    const listed = await printedBy([
      "list",
      "--local",
      "--config",
      join(repo.dir, "wrangler.toml"),
    ]);
    expect(listed).toContain("the top level (local development): 1 held tool");
    expect(listed).toContain(`${JSON.stringify(TOOL)}  changed: description  pin: ${HELD}`);
  }, 600_000);

  it("refuses what it cannot do, and says why", async () => {
    const nowhere = npmRun("holds", ["list"], repo.dir);
    expect(nowhere.status).toBe(1);
    expect(nowhere.out).toContain("Say where: --env NAME");
    // The others are the same command's own checks, asked in this process (a process costs 3 s).
    const config = ["--local", "--config", join(repo.dir, "wrangler.toml")];
    await expect(holds(["list", "--nope", ...config])).rejects.toThrow(
      expect.objectContaining({
        constructor: Refused,
        message: expect.stringContaining("Usage: npm run holds -- list|accept TOOL"),
      }),
    );
    await expect(holds(["accept", "other", ...config])).rejects.toThrow(
      // Which origin it looked at: the accept command a line of `wrangler dev --var ORIGIN_URL:…`
      // gives reads wrangler.toml's, and said only "not held".
      new Refused(
        '"other" is not held in the top level (local development) for the origin 127.0.0.1:8788; for a proxy in front of another origin (wrangler dev --var ORIGIN_URL:URL), give it with --origin URL.',
      ),
    );
    await expect(holds(["accept", TOOL, "--pin", PINNED, ...config])).rejects.toThrow(
      new Refused(`${JSON.stringify(TOOL)} is not held on that definition; held: ${HELD}`),
    );
  }, 600_000);

  it("refuses a map a later version wrote, which it cannot read, rather than say no tool is held", async () => {
    const config = ["--local", "--config", join(repo.dir, "wrangler.toml")];
    const later = JSON.stringify({ format: MAP_FORMAT + 1, tools: {}, held: { [TOOL]: [HELD] } });
    await toolMap((kv) => kv.put(`${SCOPE}:map`, later));
    for (const argv of [["list"], ["accept", TOOL]]) {
      await expect(holds([...argv, ...config])).rejects.toThrow(
        new Refused(
          `The origin's map in the top level (local development) is a later version's (format ${MAP_FORMAT + 1}): run npm run holds from that version.`,
        ),
      );
    }
  }, 600_000);

  it("lists a held tool whose name holds control characters without them, and a command that accepts it", async () => {
    // What a hostile origin may write to the operator's terminal: set its clipboard, clear its
    // screen, and show its name right to left ("\u202Eelif" shows as "file").
    const hostile = "\u001b]52;c;cm0gLXJmIH4=\u0007report\u009b2J\u202Eelif";
    const map = {
      format: 2,
      tools: { [hostile]: ["s1", 20_000, "s1/e1/a1", "d1", "-/-/-"] },
      chunks: 0,
      held: { [hostile]: [HELD] },
    };
    await toolMap((kv) => kv.put(`${SCOPE}:map`, JSON.stringify(map)));
    const out = await printedBy(["list", "--local", "--config", join(repo.dir, "wrangler.toml")]);
    expect(out).toContain("1 held tool");
    expect(out).toContain(
      `"\\u001b]52;c;cm0gLXJmIH4=\\u0007report\\u009b2J\\u202eelif"  changed: description`,
    );
    // biome-ignore lint/suspicious/noControlCharactersInRegex: what must not be printed.
    expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    // Pasted into bash (or zsh), the command accepts that very name.
    const command = /accept: (npm run holds -- accept .*)$/m.exec(out)?.[1];
    const accepted = shell("bash", ["-c", `${command}`], repo.dir);
    expect(accepted.status).toBe(0);
    // What it says it accepted: the name escaped as list shows it (npm's echo of the command it
    // runs, above that, is npm's own).
    expect(/^Accepted .* at /m.exec(accepted.out)?.[0]).toBe(
      'Accepted "\\u001b]52;c;cm0gLXJmIH4=\\u0007report\\u009b2J\\u202eelif" at ',
    );
    const values = await toolMap(async (kv) => {
      const { keys } = await kv.list({ prefix: `${SCOPE}:accept:` });
      return Promise.all(keys.map(({ name }) => kv.get(name)));
    });
    expect(values).toContain(hostile);
  }, 600_000);

  it("accepts a tool whose name wrangler would read as an option, by that name", async () => {
    // `wrangler kv key put KEY VALUE` reads a value `--path=…` as its option: the file's contents.
    const dashed = "--path=wrangler.toml";
    const map = {
      format: 2,
      tools: { [dashed]: ["s1", 20_000, "s1/e1/a1", "d1", "-/-/-"] },
      chunks: 0,
      held: { [dashed]: [HELD] },
    };
    await toolMap((kv) => kv.put(`${SCOPE}:map`, JSON.stringify(map)));
    const config = ["--local", "--config", join(repo.dir, "wrangler.toml")];
    await holds(["accept", "--pin", HELD, ...config, "--", dashed]);
    const values = await toolMap(async (kv) => {
      const { keys } = await kv.list({ prefix: `${SCOPE}:accept:` });
      return Promise.all(keys.map(({ name }) => kv.get(name)));
    });
    expect(values).toContain(dashed);
  }, 600_000);

  it("reads a gate tenant's map, whose secrets are at Cloudflare, as it reads any tenant's", async () => {
    // As wrangler.toml's gate example sets one up: npm run check passes it.
    const config = join(repo.dir, "gate.toml");
    writeFileSync(
      config,
      `name = "holds-gate"
main = "src/index.ts"
compatibility_date = "2026-11-01"
[env.gated]
secrets = { required = ["IDP_CLIENT_ID", "IDP_CLIENT_SECRET", "ORIGIN_SECRET"] }
[env.gated.vars]
ORIGIN_URL = "https://mcp.gated.example/mcp"
WRANGLER_ENV = "gated"
AUTH_MODE = "gate"
IDP_ISSUER = "https://accounts.google.com"
ALLOWED_DOMAINS = "acme.com"
[[env.gated.kv_namespaces]]
binding = "TOOL_MAP"
id = "0123456789abcdef0123456789abcdef"
`,
    );
    expect(await printedBy(["list", "--env", "gated", "--local", "--config", config])).toBe(
      "[env.gated]: no tool is held.",
    );
    // What holds needs of the settings is the origin's URL; a wrong one is still refused, by name.
    await expect(
      holds(["list", "--env", "gated", "--local", "--config", config, "--origin", "ftp://x"]),
    ).rejects.toThrow(
      expect.objectContaining({
        constructor: Refused,
        message: expect.stringContaining("must be an absolute http:// or https:// URL"),
      }),
    );
  }, 600_000);

  it("reads a map as this release writes it (layout 1 mid-migration, held notes, thousands of tools) and writes the accept key alone", async () => {
    // An origin of its own: the only keys of its scope are the ones this case writes.
    const url = "https://mcp.rollout.example/mcp";
    const scope = `v2:${createHash("sha256").update(url).digest("hex").slice(0, 16)}`;
    const hostile = "report\u202Eelif\u001b[2J";
    const tools = new Map(
      Array.from({ length: 3_000 }, (_, i): [string, StoredTool] => [
        `service_${i}.operation`,
        { schema: "2.1a2b3c4", seen: 20_000, pin: `${"A".repeat(43)}/2.1a2b3c4/5d6e7f8/-/-/-/-` },
      ]),
    );
    tools.set(hostile, { schema: "s1", seen: 20_000, pin: PINNED });
    const map = encodeMap({
      tools,
      held: new Map([
        [hostile, [HELD]],
        ["service_7.operation", [HELD, "d3/s1/e3/a1/-/-/-"]],
      ]),
      chunks: 1,
      legacy: new Map([["v1:p", new Map([["service_1.operation", "service_1_operation"]])]]),
      migrated: new Set(["v1:q"]),
      legacyRead: new Map([["v1:p", "v1:p:tool:service_1_operation"]]),
      listingPin: "L".repeat(43),
    });
    await toolMap((kv) => kv.put(`${scope}:map`, map));
    const config = ["--local", "--config", join(repo.dir, "wrangler.toml"), "--origin", url];

    const listed = await printedBy(["list", ...config]);
    expect(listed).toContain("2 held tools");
    expect([...statesIn(listed).keys()]).toEqual([
      `"report\\u202eelif\\u001b[2J" ${HELD}`,
      `"service_7.operation" ${HELD}`,
      `"service_7.operation" d3/s1/e3/a1/-/-/-`,
    ]);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: what must not be printed.
    expect(listed).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);

    await holds(["accept", "--pin", HELD, ...config, "--", hostile]);
    const after = await toolMap(async (kv) => {
      const { keys } = await kv.list({ prefix: `${scope}:` });
      return Promise.all(keys.map(async ({ name }) => [name, await kv.get(name)]));
    });
    // The map as it was, and one accept key beside it: holds writes nothing else.
    expect(Object.fromEntries(after)).toEqual({
      [`${scope}:map`]: map,
      [acceptKey(scope, HELD, hostile)]: hostile,
    });
  }, 600_000);

  describe("two held tools whose names share an accept key", () => {
    const map = {
      format: 2,
      tools: {
        [NOTES]: ["s1", 20_000, "s1/e1/a1", "d1", "-/-/-"],
        [WIPE]: ["s1", 20_000, "s1/e1/a1", "d1", "-/-/-"],
      },
      chunks: 0,
      held: { [NOTES]: [HELD], [WIPE]: [HELD] },
    };
    const config = ["--local", "--config", join(repo.dir, "wrangler.toml")];
    const key = acceptKey(SCOPE, HELD, NOTES);
    const valueOfKey = () => toolMap((kv) => kv.get(key));

    it("lists as accepted only the tool the key's value names", async () => {
      expect(acceptKey(SCOPE, HELD, WIPE)).toBe(key);
      await toolMap(async (kv) => {
        await kv.put(`${SCOPE}:map`, JSON.stringify(map));
        await kv.put(key, NOTES);
      });
      const states = statesIn(await printedBy(["list", ...config]));
      expect(states.get(`"${NOTES}" ${HELD}`)).toBe(
        "accepted, taken at the next listing that shows it",
      );
      expect(states.get(`"${WIPE}" ${HELD}`)).toBe(
        `not accepted: the accept key it shares with "${NOTES}" (their names' 32-bit fingerprint) accepts that tool; once list no longer shows "${NOTES}" held on this definition, accept: npm run holds -- accept ${WIPE} --pin ${HELD} --local`,
      );

      // A value that names neither (read no further than the longer name) accepts neither.
      await toolMap((kv) => kv.put(key, `${NOTES}, and ${WIPE}`));
      const neither = statesIn(await printedBy(["list", ...config]));
      expect(neither.get(`"${NOTES}" ${HELD}`)).toBe(
        `accept: npm run holds -- accept ${NOTES} --pin ${HELD} --local`,
      );
      expect(neither.get(`"${WIPE}" ${HELD}`)).toBe(
        `accept: npm run holds -- accept ${WIPE} --pin ${HELD} --local`,
      );
    }, 600_000);

    it("reads the values of 10 accept keys, and says which it did not read", async () => {
      const tools = Array.from({ length: 11 }, (_, i) => `tool_${i}`);
      await toolMap(async (kv) => {
        const entry = ["s1", 20_000, "s1/e1/a1", "d1", "-/-/-"];
        const held = Object.fromEntries(tools.map((tool) => [tool, [HELD]]));
        const many = {
          ...map,
          tools: Object.fromEntries(tools.map((tool) => [tool, entry])),
          held,
        };
        await kv.put(`${SCOPE}:map`, JSON.stringify(many));
        for (const tool of tools) await kv.put(acceptKey(SCOPE, HELD, tool), tool);
      });
      const states = [...statesIn(await printedBy(["list", ...config])).values()];
      expect(states).toEqual([
        ...tools.slice(0, 10).map(() => "accepted, taken at the next listing that shows it"),
        `an accept key is written, not read (list reads 10): accept: npm run holds -- accept tool_10 --pin ${HELD} --local`,
      ]);
    }, 600_000);

    it("refuses to accept the other, writing nothing, until the proxy took the first's acceptance", async () => {
      await toolMap(async (kv) => {
        await kv.put(`${SCOPE}:map`, JSON.stringify(map));
        await kv.put(key, NOTES);
      });
      await expect(holds(["accept", WIPE, "--pin", HELD, ...config])).rejects.toThrow(
        new Refused(
          `Not accepted: "${WIPE}" shares its accept key at ${HELD} with "${NOTES}" (their names' 32-bit fingerprint), and the key accepts "${NOTES}", held on that definition too; one key accepts one tool. Let the proxy take "${NOTES}"'s acceptance at its next listing (npm run holds -- list then no longer shows "${NOTES}" held on ${HELD}), then accept "${WIPE}" again.`,
        ),
      );
      expect(await valueOfKey()).toBe(NOTES);

      // The proxy took it: the map no longer holds the first on that definition.
      await toolMap((kv) =>
        kv.put(`${SCOPE}:map`, JSON.stringify({ ...map, held: { [WIPE]: [HELD] } })),
      );
      expect(await printedBy(["accept", WIPE, "--pin", HELD, ...config])).toContain(
        `Accepted "${WIPE}" at ${HELD}`,
      );
      expect(await valueOfKey()).toBe(WIPE);
      // Accepted again, it is said so, and nothing is written.
      expect(await printedBy(["accept", WIPE, "--pin", HELD, ...config])).toContain(
        `"${WIPE}" is accepted at ${HELD} already`,
      );
    }, 600_000);
  });
});
