/**
 * `npm run tenant -- add` as a new operator runs it, in a scratch copy of the
 * repository, with wrangler not logged in (nothing here reaches the network):
 * the tenant it writes passes `npm run check` and `wrangler deploy --dry-run`
 * with no warning, in relay and in broker mode.
 */
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Refused } from "../../scripts/lib/command";
import { add } from "../../scripts/tenant";
import { npmRun, repoCopy, sections, shell } from "./npm-scripts";

const repo = repoCopy();
afterAll(() => repo.remove());

/** `wrangler deploy --dry-run --env NAME` in the copy: what it prints, and whether it warned. */
function dryRun(name: string) {
  const run = shell(
    "npx",
    ["wrangler", "deploy", "--dry-run", "--env", name, "--outdir", join(repo.dir, `dist-${name}`)],
    repo.dir,
  );
  return { ...run, warned: /WARNING|▲/.test(run.out) };
}

describe("npm run tenant -- add", () => {
  it("writes a relay tenant that checks clean and deploys dry with no warning", () => {
    const added = npmRun(
      "tenant",
      [
        "add",
        "nu",
        "--origin",
        "https://mcp.nu.example/mcp",
        "--workers-dev",
        "nu-corp",
        "--host",
        "mcp.nu.example",
        "--profile",
        "gemini",
      ],
      repo.dir,
    );
    expect(added.status).toBe(0);
    expect(added.out).toContain("Added [env.nu] to wrangler.toml.");
    // Not logged in: the namespace is a placeholder, and the command that creates it is given.
    expect(added.out).toContain("npx wrangler kv namespace create TOOL_MAP --env nu");
    const toml = readFileSync(join(repo.dir, "wrangler.toml"), "utf8");
    expect(toml).toContain('[env.nu.vars]\nORIGIN_URL = "https://mcp.nu.example/mcp"');
    expect(toml).toContain(
      'ALLOWED_HOSTS = "mcp-edge-rewriter-nu.nu-corp.workers.dev,mcp.nu.example"',
    );
    expect(toml).toContain('WRANGLER_ENV = "nu"\nPROFILE = "gemini"');

    // What `npm run check -- --env nu` says of it (the whole file's check is the last test's).
    expect(sections(added.out).get("[env.nu]")?.verdict).toBe("ok");

    const deployed = dryRun("nu");
    expect(deployed.status).toBe(0);
    expect(deployed.warned).toBe(false);
    expect(deployed.out).toContain("--dry-run: exiting now.");
  }, 600_000);

  it("writes a broker tenant with its sign-in bindings, clean too", () => {
    const added = npmRun(
      "tenant",
      [
        "add",
        "nb",
        "--origin",
        "https://mcp.nb.example/mcp",
        "--auth",
        "broker",
        "--host",
        "mcp.nb.example",
      ],
      repo.dir,
    );
    expect(added.status).toBe(0);
    expect(added.out).toContain("npx wrangler kv namespace create OAUTH_KV --env nb");
    const toml = readFileSync(join(repo.dir, "wrangler.toml"), "utf8");
    expect(toml).toContain(
      '[[env.nb.ratelimits]]\nname = "SIGN_IN_RATE_LIMIT"\nnamespace_id = "7002"',
    );
    expect(toml).toContain('[[env.nb.durable_objects.bindings]]\nname = "SIGN_IN_BUDGET"');
    expect(toml).toContain("workers_dev = false");

    expect(sections(added.out).get("[env.nb]")?.verdict).toBe("ok");
    const deployed = dryRun("nb");
    expect(deployed.status).toBe(0);
    expect(deployed.warned).toBe(false);
    expect(deployed.out).toMatch(/env\.SIGN_IN_BUDGET \(SignInBudget\)\s+Durable Object/);
  }, 600_000);

  it("leaves the whole file clean, and refuses what it cannot write well, writing nothing", () => {
    const all = npmRun("check", [], repo.dir);
    expect(all.status).toBe(0);
    expect([...sections(all.out).keys()]).toEqual([
      "the top level (local development)",
      "[env.acme]",
      "[env.acme-broker]",
      "[env.nu]",
      "[env.nb]",
    ]);
    const before = readFileSync(join(repo.dir, "wrangler.toml"), "utf8");
    const refusals: Array<[string[], string]> = [
      [
        ["add", "nu", "--origin", "https://x.example/mcp", "--host", "x.example"],
        "has [env.nu] already",
      ],
      [["add", "nx", "--origin", "https://x.example/mcp"], "Say where the tenant is served"],
      [
        ["add", "nx", "--origin", "ftp://x.example", "--host", "x.example"],
        "ORIGIN_URL: must be an absolute http:// or https:// URL",
      ],
      [
        [
          "add",
          "nx",
          "--origin",
          "https://x.example/mcp",
          "--host",
          "x.example",
          "--profile",
          "claude",
        ],
        "PROFILE: must be one of",
      ],
      [
        ["add", "Nx_", "--origin", "https://x.example/mcp", "--host", "x.example"],
        "lower-case letters, digits and dashes",
      ],
      // The subdomain as the dashboard shows it: ALLOWED_HOSTS would list a host no request has.
      [
        ["add", "nx", "--origin", "https://x.example/mcp", "--workers-dev", "nx-corp.workers.dev"],
        "--workers-dev takes your account's workers.dev subdomain alone",
      ],
      [
        ["add", "nx", "--origin", "https://x.example/mcp", "--workers-dev", ""],
        "--workers-dev takes your account's workers.dev subdomain alone",
      ],
      [
        ["add", "nx", "--origin", "https://x.example/mcp", "--host", ""],
        "--host takes a host name, like mcp.acme.example",
      ],
      [
        ["add", "nx", "--origin", "https://x.example/mcp", "--host", "x..example"],
        "--host takes a host name, like mcp.acme.example",
      ],
      [
        ["add", "nx", "--origin", "https://x.example/mcp", "--host", "https://x.example"],
        "--host takes a host name, like mcp.acme.example",
      ],
      [
        ["add", "nx", "--origin", "https://x.example/mcp", "--auth-mode", "broker"],
        "Usage: npm run tenant -- add NAME --origin URL",
      ],
    ];
    // The first as the operator runs it: the reason printed, exit code 1.
    const [[firstArgs, firstSays], ...others] = refusals as [
      [string[], string],
      ...typeof refusals,
    ];
    const refused = npmRun("tenant", firstArgs, repo.dir);
    expect(refused.status).toBe(1);
    expect(refused.out).toContain(firstSays);
    // The others are the same command's own checks, asked in this process (a process costs 3 s).
    const config = join(repo.dir, "wrangler.toml");
    for (const [args, says] of others) {
      const [, ...argv] = args; // `add`, the command
      expect(() => add([...argv, "--config", config]), args.join(" ")).toThrow(
        expect.objectContaining({ constructor: Refused, message: expect.stringContaining(says) }),
      );
    }
    expect(readFileSync(config, "utf8")).toBe(before);
    // A file wrangler cannot read is told by where it stops, not thrown as a stack trace.
    const broken = join(repo.dir, "broken.toml");
    writeFileSync(broken, 'name = "broken"\n[vars\n');
    expect(() => add(["nx", "--origin", "https://x.example/mcp", "--config", broken])).toThrow(
      new Refused(`${broken} (line 2, column 5): Invalid TOML document: illegal character in key`),
    );
  }, 600_000);

  it("tells every mistake of one command at once, the section's with the arguments', writing nothing", () => {
    const config = join(repo.dir, "wrangler.toml");
    const before = readFileSync(config, "utf8");
    const refusal = (argv: string[]) => {
      try {
        add([...argv, "--config", config]);
      } catch (error) {
        if (error instanceof Refused) return error.message;
        throw error;
      }
      throw new Error("not refused");
    };
    const told = refusal([
      "nz",
      "--origin",
      "ftp://nz.example/mcp",
      "--auth",
      "gate",
      "--profile",
      "claude",
      "--workers-dev",
      "nz-corp.workers.dev",
      "--host",
      "nz..example",
    ]);
    for (const says of [
      "--auth is relay or broker; gate mode is written with --auth broker",
      "--workers-dev takes your account's workers.dev subdomain alone",
      "--host takes a host name, like mcp.acme.example",
      "ORIGIN_URL: must be an absolute http:// or https:// URL",
      "PROFILE: must be one of",
      "Nothing written.",
    ]) {
      expect(told).toContain(says);
    }
    // What a deploy of the section would need first is no step for a section not written: a
    // `kv namespace create` run for it would make a namespace no tenant binds.
    expect(told).not.toContain("note:");
    expect(told).not.toContain("kv namespace create");
    // A name no section can be written for: what can be told without one is told beside it.
    const unnamed = refusal(["Nz_", "--host", "nz..example"]);
    for (const says of [
      "lower-case letters, digits and dashes",
      "--origin URL: the full URL of the origin's MCP endpoint.",
      "--host takes a host name, like mcp.acme.example",
    ]) {
      expect(unnamed).toContain(says);
    }
    // Nor does a name no section can be written for, or one taken, hide the origin's and the
    // profile's mistakes: each is checked alone, by the setting it sets.
    const origin = "https://nz:s3cret@nz.example/mcp";
    for (const name of ["Nz_", "acme"]) {
      const alone = refusal([
        name,
        "--origin",
        origin,
        "--profile",
        "claude",
        "--host",
        "nz.example",
      ]);
      expect(alone).toContain(
        "--origin (ORIGIN_URL) must hold no user name or password (user:pass@ before the host)",
      );
      expect(alone).toContain("--profile (PROFILE) must be one of openai, openai-strict");
      expect(alone).not.toContain("s3cret");
    }
    expect(readFileSync(config, "utf8")).toBe(before);
  });

  it("creates the namespaces with the wrangler.toml --config names, logged in", () => {
    // wrangler, logged in, as far as add asks it: its namespace is created only for an
    // environment the file it reads (--config, else ./wrangler.toml) defines.
    const bin = mkdtempSync(join(tmpdir(), "wrangler-bin-"));
    const other = join(bin, "other.toml");
    copyFileSync(join(repo.dir, "wrangler.toml"), other);
    writeFileSync(
      join(bin, "wrangler"),
      `#!/bin/sh
case "$*" in
  "whoami --json") echo '{"loggedIn": true}' ;;
  "kv namespace create TOOL_MAP --env no --config ${other}") echo 'id = "0123456789abcdef0123456789abcdef"' ;;
  *) echo "No environment found in configuration with name" >&2; exit 1 ;;
esac
`,
    );
    chmodSync(join(bin, "wrangler"), 0o755);
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    try {
      add([
        "no",
        "--origin",
        "https://mcp.no.example/mcp",
        "--host",
        "mcp.no.example",
        "--config",
        other,
      ]);
      expect(readFileSync(other, "utf8")).toContain(
        '[[env.no.kv_namespaces]]\nbinding = "TOOL_MAP"\nid = "0123456789abcdef0123456789abcdef"',
      );
    } finally {
      process.env.PATH = path;
      rmSync(bin, { recursive: true, force: true });
    }
  });
});

describe("npm run tenant -- add, with a query in --origin", () => {
  // A copy of its own: the tests above count the tenants theirs holds.
  const own = repoCopy();
  afterAll(() => own.remove());

  it("says a key in ORIGIN_URL's query belongs in a secret, without printing it", () => {
    const added = npmRun(
      "tenant",
      ["add", "xi", "--origin", "https://mcp.xi.example/mcp?key=xi-s3cret", "--workers-dev", "xi"],
      own.dir,
    );
    expect(added.status).toBe(0);
    expect(added.out).toContain("npx wrangler secret put ORIGIN_URL --env xi");
    expect(added.out).not.toContain("xi-s3cret");
  }, 600_000);
});
