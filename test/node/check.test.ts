/**
 * `npm run check` as an operator runs it: over a wrangler.toml of broken
 * environments (each setting, several at once, bad JSON, bindings, what
 * wrangler warns about), every problem told at once with its path; over the
 * shipped wrangler.toml, clean. `npm run deploy` refuses what check refuses.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { check, checkEnvironment } from "../../scripts/check";
import { deploy, isDryRun } from "../../scripts/deploy";
import { Refused } from "../../scripts/lib/command";
import { PLACEHOLDER_ID, readEnvironment } from "../../scripts/lib/environments";
import { npmRun, ROOT, sections } from "./npm-scripts";

const scratch = mkdtempSync(join(tmpdir(), "check-"));

/**
 * A wrangler.toml of its own, in a new directory of `scratch`: the Worker
 * `name`, this repository's entry point, then `rest`. Its path and directory.
 */
function scratchConfig(name: string, rest: string): { dir: string; path: string } {
  const dir = mkdtempSync(join(scratch, `${name}-`));
  const path = join(dir, "wrangler.toml");
  writeFileSync(
    path,
    `name = "${name}"
main = "${join(ROOT, "src/index.ts")}"
compatibility_date = "2026-11-01"
${rest}`,
  );
  return { dir, path };
}
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const VALID = 'ORIGIN_URL = "https://o.example/mcp"';
/** `binding` of a KV namespace of `env`'s own: no other section has its id (md5's 32 hex digits). */
const KV = (env: string, binding = "TOOL_MAP") =>
  `[[env.${env}.kv_namespaces]]\nbinding = "${binding}"\nid = "${createHash("md5").update(`${env}/${binding}`).digest("hex")}"\n`;
/** Broker and gate mode's bindings in `env`, its TOOL_MAP among them; `limit`, a namespace_id of its own. */
const SIGN_IN = (env: string, limit: number) => `${KV(env)}
${KV(env, "OAUTH_KV")}
[[env.${env}.ratelimits]]
name = "SIGN_IN_RATE_LIMIT"
namespace_id = "${limit}"
simple = { limit = 30, period = 60 }
[[env.${env}.durable_objects.bindings]]
name = "SIGN_IN_BUDGET"
class_name = "SignInBudget"
`;

/** One broken setting per environment: [setting, TOML value, what check says]. */
const SETTINGS: Array<[string, string, string]> = [
  [
    "ORIGIN_URL",
    '"ftp://o.example/mcp"',
    "ORIGIN_URL: must be an absolute http:// or https:// URL",
  ],
  ["MCP_PATH", '"/healthz"', "MCP_PATH: must not be one of the proxy's own routes"],
  ["ORIGIN_TIMEOUT_MS", '"soon"', "ORIGIN_TIMEOUT_MS: must be a whole number of milliseconds"],
  ["MAX_BODY_BYTES", "99999999999", "MAX_BODY_BYTES: must be at most 16777216 bytes"],
  ["PROFILE", '"claude"', "PROFILE: must be one of openai, openai-strict"],
  ["NAME_MAX_LENGTH", '"4"', "NAME_MAX_LENGTH: must be at least 12 characters"],
  ["MAX_TOOLS", '"zero"', "MAX_TOOLS: must be a whole number of tools"],
  ["TOOL_CHANGES", '"block"', "TOOL_CHANGES: must be one of allow, log, hold"],
  ["ARGUMENT_VALIDATION", '"strict"', "ARGUMENT_VALIDATION: must be one of off, warn, enforce"],
  [
    "CALLS_ANSWER_SAMPLING_RATE",
    "1.5",
    "CALLS_ANSWER_SAMPLING_RATE: must be 0, or a number from 0.0001 to 1",
  ],
  ["ALLOWED_HOSTS", '"https://x.example"', "ALLOWED_HOSTS: must be hostnames or host:port pairs"],
  ["PUBLIC_URL", '"https://x.example/mcp"', "PUBLIC_URL: must be the proxy's public origin only"],
  ["AUTH_MODE", '"proxy"', "AUTH_MODE: must be one of relay, broker"],
  [
    "UPSTREAM_ISSUER",
    '"auth.example"',
    "UPSTREAM_ISSUER: must be an absolute http:// or https:// URL",
  ],
  ["SIGN_IN_DAILY_WRITES", '"2"', "SIGN_IN_DAILY_WRITES: must be at least 3 writes"],
  [
    "UPSTREAM_CLIENT_SECRET",
    '"s3cret"',
    "UPSTREAM_CLIENT_SECRET: is read only with AUTH_MODE=broker, and AUTH_MODE is relay",
  ],
  [
    "PASS_HEADERS",
    '"x-tenant, Cookie"',
    "PASS_HEADERS: has an entry (number 2) that carries cookies",
  ],
  ["TOOL_RULES", "{ hid = [] }", "TOOL_RULES.hid: is not a rule (hide, only, hideAnnotated"],
];

const envOf = (setting: string) => `bad-${setting.toLowerCase().replaceAll("_", "-")}`;

const CONFIG = `
name = "check-test"
main = "${join(ROOT, "src/index.ts")}"
compatibility_date = "2026-11-01"

[exports.SignInBudget]
type = "durable-object"
storage = "sqlite"

${SETTINGS.map(
  ([setting, value]) => `[env.${envOf(setting)}.vars]
${setting === "ORIGIN_URL" ? "" : VALID}
WRANGLER_ENV = "${envOf(setting)}"
${setting} = ${value}
${KV(envOf(setting))}`,
).join("\n")}

[env.several.vars]
${VALID}
WRANGLER_ENV = "several"
MAX_TOOLS = "zero"
AUTH_MODE = "broker"
TOOL_RULES = """{
  "hide": ["admin.*"],
  "tools": {"a.b": {"name": "ab",}}
}"""
${KV("several")}

[env.rules-table.vars]
${VALID}
WRANGLER_ENV = "rules-table"
[env.rules-table.vars.TOOL_RULES.tools."files.read"]
name = "read-file"
fixed = { owner = "me" }
defaults = { owner = "you" }
${KV("rules-table")}

[env.bindings.vars]
${VALID}
WRANGLER_ENV = "bindings"
AUTH_MODE = "broker"
${KV("bindings")}
${KV("bindings", "SIGN_IN_RATE_LIMIT")}
${KV("bindings", "OAUTH_KV")}
[[env.bindings.durable_objects.bindings]]
name = "SIGN_IN_BUDGET"
class_name = "SignInBudget"

[env.kinds.vars]
${VALID}
WRANGLER_ENV = "kinds"
[[env.kinds.r2_buckets]]
binding = "TOOL_MAP"
bucket_name = "tool-map"

[env.unnamed.vars]
${VALID}
${KV("unnamed")}

[env.calls-unnamed.vars]
${VALID}
${KV("calls-unnamed")}
[[env.calls-unnamed.analytics_engine_datasets]]
binding = "CALLS"
dataset = "mcp_calls"

[env.secret]
secrets = { required = ["ORIGIN_URL", "UPSTREAM_CLIENT_ID"] }
[env.secret.vars]
WRANGLER_ENV = "secret"
AUTH_MODE = "broker"
UPSTREAM_CLIENT_SECRET = "s3cret"
${SIGN_IN("secret", 7001)}

[env.secret-alone]
secrets = { required = ["UPSTREAM_CLIENT_SECRET"] }
[env.secret-alone.vars]
${VALID}
WRANGLER_ENV = "secret-alone"
AUTH_MODE = "broker"
${SIGN_IN("secret-alone", 7003)}

[env.gate-undeclared.vars]
${VALID}
WRANGLER_ENV = "gate-undeclared"
AUTH_MODE = "gate"
IDP_ISSUER = "https://accounts.google.com"
ALLOWED_DOMAINS = "acme.com"
${SIGN_IN("gate-undeclared", 7002)}

[env.relay-sign-in.vars]
${VALID}
WRANGLER_ENV = "relay-sign-in"
SIGN_IN_DAILY_WRITES = "500"
${SIGN_IN("relay-sign-in", 7005)}

[env.warned]
workers_devv = true
[env.warned.vars]
${VALID}
WRANGLER_ENV = "warned"
${KV("warned")}

[env.placeholder.vars]
${VALID}
WRANGLER_ENV = "placeholder"
[[env.placeholder.kv_namespaces]]
binding = "TOOL_MAP"
id = "00000000000000000000000000000000"

[env.misspelled]
secrets = { required = ["ORIGIN_KEY"] }
[env.misspelled.vars]
${VALID}
WRANGLER_ENV = "misspelled"
ARGUMENT_VALIDATON = "enforce"
${KV("misspelled")}
`;

describe("npm run check", () => {
  const path = join(scratch, "wrangler.toml");
  writeFileSync(path, CONFIG);
  const { status, out } = npmRun("check", ["--config", path]);
  const said = sections(out);

  it("fails when any environment has a problem, and says of every one", () => {
    expect(status).toBe(1);
    expect([...said.keys()]).toEqual([
      "the top level (local development)",
      ...SETTINGS.map(([setting]) => `[env.${envOf(setting)}]`),
      "[env.several]",
      "[env.rules-table]",
      "[env.bindings]",
      "[env.kinds]",
      "[env.unnamed]",
      "[env.calls-unnamed]",
      "[env.secret]",
      "[env.secret-alone]",
      "[env.gate-undeclared]",
      "[env.relay-sign-in]",
      "[env.warned]",
      "[env.placeholder]",
      "[env.misspelled]",
    ]);
  });

  it.each(SETTINGS)("tells %s by its path", (setting, _, says) => {
    const section = said.get(`[env.${envOf(setting)}]`);
    expect(section?.verdict).toBe("1 problem");
    expect(section?.lines[0]).toContain(says);
  });

  it("tells every problem at once, bad JSON by line and column, checks across settings included", () => {
    expect(said.get("[env.several]")).toEqual({
      verdict: "5 problems",
      lines: [
        "MAX_TOOLS: must be a whole number of tools",
        "TOOL_RULES: is not valid JSON: at line 3, column 34, expected a member's name in double quotes",
        "OAUTH_KV: is required with AUTH_MODE=broker: bind a KV namespace as OAUTH_KV",
        "SIGN_IN_RATE_LIMIT: is required with AUTH_MODE=broker: add a [[ratelimits]] binding named SIGN_IN_RATE_LIMIT",
        "SIGN_IN_BUDGET: is required with AUTH_MODE=broker: bind the Durable Object class SignInBudget as SIGN_IN_BUDGET",
      ],
    });
    expect(said.get("[env.rules-table]")?.lines).toEqual([
      'TOOL_RULES.tools["files.read"].name: "read-file" is not a legal tool name under the portable profile (every profile is served): use letters, digits and _, starting with a letter, at most 63 characters',
      'TOOL_RULES.tools["files.read"].defaults.owner: is also fixed: a fixed value is always sent',
    ]);
  });

  it("checks bindings by what they are, and what each environment misses", () => {
    expect(said.get("[env.bindings]")?.lines).toEqual([
      "SIGN_IN_RATE_LIMIT: must be a Workers Rate Limiting binding ([[ratelimits]])",
    ]);
    // An R2 bucket's get() reads another store: the Worker would refuse it as it starts.
    expect(said.get("[env.kinds]")?.lines).toEqual([
      "TOOL_MAP: must be a KV namespace binding ([[kv_namespaces]])",
    ]);
    expect(said.get("the top level (local development)")?.lines).toEqual([
      'ORIGIN_URL: is missing; set it to the full URL of the origin\'s MCP endpoint; if it is a secret (wrangler secret put), declare it in the top level: secrets = { required = ["ORIGIN_URL"] }',
      "TOOL_MAP: is missing: bind a KV namespace as TOOL_MAP",
    ]);
    expect(said.get("[env.unnamed]")?.lines).toEqual([
      'WRANGLER_ENV: is missing: set it to "unnamed" in [env.unnamed.vars], so that the commands the proxy logs (npm run holds -- accept …) name this one',
    ]);
    // Its call analytics' points would have no index of their own: the Worker refuses it too.
    expect(said.get("[env.calls-unnamed]")?.lines).toEqual([
      "WRANGLER_ENV: is required with the CALLS binding: each data point is indexed by it; set it to the name of this [env.NAME] (npm run tenant writes it)",
      'WRANGLER_ENV: is missing: set it to "calls-unnamed" in [env.calls-unnamed.vars], so that the commands the proxy logs (npm run holds -- accept …) name this one',
    ]);
    // A broker tenant with its AUTH_MODE left out: a relay, whose sign-in nothing reads.
    const relayOnly =
      "is read only with AUTH_MODE=broker or gate, and AUTH_MODE is relay: set AUTH_MODE, or remove this";
    expect(said.get("[env.relay-sign-in]")).toEqual({
      verdict: "4 problems",
      lines: ["SIGN_IN_DAILY_WRITES", "OAUTH_KV", "SIGN_IN_RATE_LIMIT", "SIGN_IN_BUDGET"].map(
        (setting) => `${setting}: ${relayOnly}`,
      ),
    });
    expect(said.get("[env.warned]")?.lines).toEqual([
      expect.stringMatching(/^wrangler\.toml: wrangler warns: .*workers_devv/),
    ]);
  });

  it("leaves secrets to the Worker, and notes a placeholder until a deploy", () => {
    expect(said.get("[env.secret]")).toEqual({
      verdict: "ok",
      lines: ["note: ORIGIN_URL is a secret: checked when the Worker starts, never here"],
    });
    // A declared secret is left to the Worker, and what it needs beside it is still checked.
    expect(said.get("[env.secret-alone]")).toEqual({
      verdict: "1 problem",
      lines: [
        'UPSTREAM_CLIENT_ID: is required beside UPSTREAM_CLIENT_SECRET; if it is a secret (wrangler secret put), declare it in [env.secret-alone]: secrets = { required = ["UPSTREAM_CLIENT_ID"] }',
      ],
    });
    // Set with wrangler secret put, as docs/sign-in.md's gate mode does, and not declared.
    expect(said.get("[env.gate-undeclared]")).toEqual({
      verdict: "2 problems",
      lines: [
        'IDP_CLIENT_ID: is required with AUTH_MODE=gate: the client ID of the proxy\'s app at your identity provider; if it is a secret (wrangler secret put), declare it in [env.gate-undeclared]: secrets = { required = ["IDP_CLIENT_ID"] }',
        'ORIGIN_SECRET: is required with AUTH_MODE=gate (or ORIGIN_USER_SECRETS): the origin\'s key, as a Worker secret or a Secrets Store binding; if it is a secret (wrangler secret put), declare it in [env.gate-undeclared]: secrets = { required = ["ORIGIN_SECRET"] }',
      ],
    });
    expect(said.get("[env.placeholder]")).toEqual({
      verdict: "ok",
      lines: [
        "note: TOOL_MAP has a placeholder for its namespace id; before a deploy, create it with `npx wrangler kv namespace create TOOL_MAP --env placeholder` and put the id it prints in wrangler.toml",
      ],
    });
  });

  it("tells a name the Worker does not read, a declared secret's too, where its default would stay in force", () => {
    const unread = "is not a setting or binding the proxy reads (docs/configuration.md names each)";
    expect(said.get("[env.misspelled]")).toEqual({
      verdict: "2 problems",
      lines: [
        `ARGUMENT_VALIDATON: ${unread}; did you mean ARGUMENT_VALIDATION?`,
        `ORIGIN_KEY: ${unread}`,
      ],
    });
  });

  it("reads --var as wrangler deploy and npm run deploy do: `--var A:1 B:2` sets both", () => {
    const both = npmRun("check", ["--env", "acme", "--var", "TOOL_CHANGES:hold", "MAX_TOOLS:zero"]);
    expect(both.status).toBe(1);
    expect(sections(both.out).get("[env.acme]")).toMatchObject({
      verdict: "1 problem",
      lines: expect.arrayContaining(["MAX_TOOLS: must be a whole number of tools"]),
    });
  });

  it("says --var takes NAME:VALUE where one is written NAME=VALUE, rather than naming a setting MAX_TOOLS=5", () => {
    for (const [script, ...rest] of [["check"], ["deploy", "--dry-run"]] as const) {
      const equals = npmRun(script, ["--env", "acme", "--var", "MAX_TOOLS=5", ...rest]);
      expect({ script, status: equals.status }).toEqual({ script, status: 1 });
      expect(equals.out).toContain("--var MAX_TOOLS=5: NAME:VALUE, as wrangler reads it");
      expect(equals.out).not.toContain("is not a setting or binding");
      expect(equals.out).not.toMatch(/^\s+at /m);
    }
  });

  it.each(["check", "deploy", "holds", "stats", "tenant"])(
    "npm run %s -- --help prints its usage and succeeds, doing nothing else",
    (script) => {
      for (const help of ["--help", "-h"]) {
        const asked = npmRun(script, [help]);
        expect({ help, status: asked.status }).toEqual({ help, status: 0 });
        expect(asked.out).toContain(`Usage: npm run ${script}`);
        expect(asked.out).not.toMatch(/Unknown option|place it after/);
      }
    },
  );

  it("answers an option it does not know, or a word no option takes, with its usage", () => {
    const unknown = npmRun("check", ["--nope"]);
    expect(unknown.status).toBe(1);
    expect(unknown.out).toContain("Usage: npm run check [-- --env NAME] [--var NAME:VALUE ...]");
    expect(unknown.out).not.toMatch(/^\s+at /m);
    const stray = npmRun("check", ["--env", "acme", "extra"]);
    expect(stray.status).toBe(1);
    expect(stray.out).toContain("extra");
    expect(stray.out).toContain("Usage: npm run check");
    expect(stray.out).not.toMatch(/^\s+at /m);
  });

  it("tells a wrangler.toml it cannot read by where it stops, with no stack trace or the file's text", () => {
    const broken = join(scratch, "broken.toml");
    writeFileSync(
      broken,
      'name = "broken"\n[vars\nORIGIN_URL = "https://o.example/mcp?key=sk-live-key"\n',
    );
    const { status, out } = npmRun("check", ["--config", broken]);
    expect(status).toBe(1);
    expect(out).toContain(`${broken} (line 2, column 5): Invalid TOML document`);
    expect(out).not.toMatch(/^\s+at /m);
    expect(out).not.toContain("sk-live-key");
  });

  it("is clean on the shipped wrangler.toml, its example tenants included", () => {
    const shipped = npmRun("check", []);
    expect(shipped.status).toBe(0);
    expect([...sections(shipped.out).values()].map(({ verdict }) => verdict)).toEqual([
      "ok",
      "ok",
      "ok",
    ]);
  });
});

describe("npm run check of a wrangler.toml whose names and values hold terminal controls", () => {
  it("prints none of them to the terminal, and no line of theirs, as it tells each problem", () => {
    // An environment's name, a rule's tool and name, and a setting: an escape that retitles the
    // window (OSC 0), one that clears the screen above (CSI, U+009B), a text turned around.
    const hostile = "evil\\u001b]0;pwned\\u0007\\u009b2J\\u202e\\n  ok";
    const path = join(scratch, "hostile.toml");
    writeFileSync(
      path,
      `name = "mcp-edge-rewriter"
main = "src/index.ts"
compatibility_date = "2025-09-01"

[env."${hostile}".vars]
${VALID}
WRANGLER_ENV = "other"
PROFILE = "claude\\u009b2J"
TOOL_RULES = '{"tools":{"files.read\\u009b2J":{"name":"bad\\u009b2J\\u202ename"}}}'
${KV(`"${hostile}"`)}`,
    );
    const { status, out } = npmRun("check", ["--config", path]);
    expect(status).toBe(1);
    // No control character but the line ends, and none of the characters that turn text around.
    const unseen =
      "[\\u0000-\\u0009\\u000b-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]";
    expect(out).not.toMatch(new RegExp(unseen));
    const label = "[env.evil\ufffd]0;pwned\ufffd\ufffd2J\ufffd ok]";
    const lines = out.trimEnd().split("\n");
    expect(lines.slice(lines.indexOf(`${path} ${label}: 3 problems`))).toEqual([
      `${path} ${label}: 3 problems`,
      "  PROFILE: must be one of openai, openai-strict, anthropic, bedrock, gemini, portable, mcp",
      expect.stringMatching(
        /^ {2}TOOL_RULES\.tools\["files\.read\ufffd2J"\]\.name: "bad\ufffd2J\ufffdname" is not a legal tool name/,
      ),
      expect.stringMatching(/^ {2}WRANGLER_ENV: names another environment: set it to "evil\ufffd/),
    ]);
  });
});

/**
 * `deploy(args)` in this process, with the repository's wrangler.toml (`where`, unless the test
 * says where itself): its exit code and what it printed.
 */
function deployed(args: string[], where = ["--config", join(ROOT, "wrangler.toml")]) {
  const printed: unknown[] = [];
  const log = vi.spyOn(console, "log").mockImplementation((line) => void printed.push(line));
  const error = vi.spyOn(console, "error").mockImplementation((line) => void printed.push(line));
  try {
    const status = deploy([...args, ...where]);
    return { status, out: printed.join("\n") };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

describe("npm run deploy", () => {
  it("refuses the top level, a broken tenant and a placeholder id, and deploys nothing", () => {
    const top = npmRun("deploy", ["--dry-run"]);
    expect(top.status).toBe(1);
    expect(top.out).toContain("the top level is the local development setup and is never deployed");
    // The others are the same command's own checks, asked in this process (a process costs 3 s).
    const broken = deployed(["--env", "acme", "--var", "MAX_TOOLS:zero", "--dry-run"]);
    expect(broken.status).toBe(1);
    expect(broken.out).toContain("MAX_TOOLS: must be a whole number of tools");
    expect(broken.out).toContain("Not deployed");
    const placeholder = deployed(["--env", "acme"]);
    expect(placeholder.status).toBe(1);
    expect(placeholder.out).toContain("TOOL_MAP: has a placeholder for its namespace id");
  });

  it("checks as a deploy what wrangler deploys: `--dry-run false`, `--dry-run=false`, `--no-dry-run`", () => {
    // wrangler (yargs) reads each of these as no dry run, and the last of two as the one that counts.
    for (const dryRun of [
      ["--dry-run", "false"],
      ["--dry-run=false"],
      ["--dry-run=1"],
      ["--no-dry-run"],
      ["--dry-run", "--no-dry-run"],
    ]) {
      const deploying = deployed(["--env", "acme", ...dryRun]);
      expect(deploying.status, dryRun.join(" ")).toBe(1);
      expect(deploying.out).toContain("TOOL_MAP: has a placeholder for its namespace id");
    }
    for (const dryRun of [["--dry-run", "true"], ["--dry-run=true"], ["--dryRun"]]) {
      expect(isDryRun(["--env", "acme", ...dryRun]), dryRun.join(" ")).toBe(true);
    }
    expect(isDryRun(["--no-dry-run", "--dry-run"])).toBe(true);
  });

  it("checks every --var wrangler deploys: `--var A:1 B:2` sets both, with or without =", () => {
    for (const vars of [
      ["--var", "TOOL_CHANGES:hold", "MAX_TOOLS:zero"],
      ["--var=TOOL_CHANGES:hold", "MAX_TOOLS:zero"],
    ]) {
      const both = deployed(["--env", "acme", ...vars, "--dry-run"]);
      expect(both.status).toBe(1);
      expect(both.out).toContain("MAX_TOOLS: must be a whole number of tools");
    }
  });

  it("checks ALLOWED_HOSTS against the hosts wrangler deploys to: --domain adds one, --route replaces the file's", () => {
    // acme's ALLOWED_HOSTS: its workers.dev host and mcp.acme.example (a custom domain).
    const leavesOut = (host: string) =>
      `ALLOWED_HOSTS: leaves out ${host}, where a route of this environment serves the Worker`;
    for (const domain of [["--domain", "mcp2.acme.example"], ["--domains=mcp2.acme.example"]]) {
      const added = deployed(["--env", "acme", "--dry-run", ...domain]);
      expect(added.status, domain.join(" ")).toBe(1);
      expect(added.out).toContain(leavesOut("mcp2.acme.example"));
      expect(added.out).toContain("Not deployed");
    }
    const route = deployed(["--env", "acme", "--dry-run", "--routes", "api.acme.example/mcp*"]);
    expect(route.status).toBe(1);
    expect(route.out).toContain(leavesOut("api.acme.example"));
    // The file's routes stand in no more, and workers.dev stays on (workers_dev = true).
    expect(route.out).not.toContain("leaves out mcp.acme.example");
  });

  it("refuses a wrangler.toml it would not check: -c=FILE, -cFILE, --c FILE, --cwd DIR, -e=NAME", () => {
    // acme as wrangler.toml has it, with a setting the Worker refuses: every request a 500.
    const { dir, path } = scratchConfig(
      "elsewhere",
      `[env.acme.vars]
${VALID}
WRANGLER_ENV = "acme"
TOOL_CHANGES = "block"
${KV("acme")}`,
    );
    for (const where of [
      [`-c=${path}`],
      [`-c${path}`],
      ["--c", path],
      [`--c=${path}`],
      ["--cwd", dir],
      [`--cwd=${dir}`],
    ]) {
      // wrangler deploys that file's acme (a dry run answers 0); check read the repository's.
      const elsewhere = deployed(["--env", "acme", "--dry-run", ...where], []);
      expect(elsewhere.status, where.join(" ")).toBe(1);
      expect(elsewhere.out).toContain("Not deployed");
      expect(elsewhere.out).toContain(`${where[0]}: npm run deploy checks`);
    }
    const env = deployed(["-e=acme", "--dry-run"]);
    expect(env.status).toBe(1);
    expect(env.out).toContain(
      "-e=acme: npm run deploy checks what --env NAME, --env=NAME, -e NAME",
    );
  });
});

/** `check(argv)` in this process: its verdict and what it printed. */
function checkedHere(argv: string[]) {
  const printed: unknown[] = [];
  const log = vi.spyOn(console, "log").mockImplementation((line) => void printed.push(line));
  try {
    return { clean: check(argv), out: printed.join("\n") };
  } finally {
    log.mockRestore();
  }
}

describe("npm run deploy and check with --secrets-file, as wrangler deploy uploads it", () => {
  const dir = mkdtempSync(join(scratch, "secrets-file-"));
  const write = (file: string, text: string) => {
    writeFileSync(join(dir, file), text);
    return join(dir, file);
  };
  const sets = (file: string) => `is set by ${file}`;

  it("tells every mistake at once, the file's names and values, and prints none of its values", () => {
    // acme (wrangler.toml) is a relay with ORIGIN_URL in its vars, and declares no secret.
    const file = write(
      "acme.env",
      [
        "ORIGIN_URL=ftp://mcp.acme.example/mcp?key=sk-file-key",
        "ORIGIN_SECRET=gate-key-value",
        "ORIGIN_KEY=sk-typo-value",
        "MAX_TOOLS=40",
      ].join("\n"),
    );
    const declare = (setting: string) =>
      `${setting}: ${sets(file)}, and not declared: declare it in [env.acme]: secrets = { required = ["${setting}"] }, so that npm run check and npm run deploy know it is set at Cloudflare, where it stays after this deploy`;
    for (const form of [
      ["--secrets-file", file],
      [`--secrets-file=${file}`],
      ["--secretsFile", file],
    ]) {
      const { status, out } = deployed(["--env", "acme", "--dry-run", ...form]);
      expect(status, form[0]).toBe(1);
      expect(out).toContain("Not deployed");
      expect(sections(out).get("[env.acme]")).toEqual({
        verdict: "7 problems",
        lines: [
          `MAX_TOOLS: ${sets(file)}, and is a setting, not a secret: set it in [env.acme.vars], where npm run check reads it (a secret stays at Cloudflare, unseen here, after every deploy)`,
          `ORIGIN_KEY: ${sets(file)}, and is not a secret the proxy reads (ORIGIN_URL, UPSTREAM_CLIENT_ID, UPSTREAM_CLIENT_SECRET, IDP_CLIENT_ID, IDP_CLIENT_SECRET, ORIGIN_SECRET, ORIGIN_USER_SECRETS): wrangler deploy would upload it to the Worker all the same; leave it out of the file`,
          declare("ORIGIN_SECRET"),
          `ORIGIN_URL: ${sets(file)}, and by wrangler.toml or --var too: in this deploy the file's value replaces that, and then stays at Cloudflare as a secret, which a later deploy's var of the name cannot replace; set it in one place`,
          declare("ORIGIN_URL"),
          `ORIGIN_URL: must be an absolute http:// or https:// URL (as ${file} sets it)`,
          `ORIGIN_SECRET: is read only with AUTH_MODE=gate, and AUTH_MODE is relay: set AUTH_MODE, or remove this (as ${file} sets it)`,
          `note: ${file} sets ORIGIN_SECRET, ORIGIN_URL for this deploy: checked with them`,
          "note: TOOL_MAP has a placeholder for its namespace id; before a deploy, create it with `npx wrangler kv namespace create TOOL_MAP --env acme` and put the id it prints in wrangler.toml",
        ],
      });
      for (const value of ["sk-file-key", "gate-key-value", "sk-typo-value", "ftp:"]) {
        expect(out).not.toContain(value);
      }
    }
  });

  it("checks a declared secret's value where the file gives it, JSON or dotenv, as the Worker would", () => {
    const { path } = scratchConfig(
      "secrets-gate",
      `[exports.SignInBudget]
type = "durable-object"
storage = "sqlite"
[env.gate]
secrets = { required = ["IDP_CLIENT_ID", "IDP_CLIENT_SECRET", "ORIGIN_USER_SECRETS"] }
[env.gate.vars]
${VALID}
WRANGLER_ENV = "gate"
AUTH_MODE = "gate"
IDP_ISSUER = "https://accounts.google.com"
ALLOWED_DOMAINS = "acme.com"
${SIGN_IN("gate", 7001)}`,
    );
    // What wrangler uploads: JSON's text values (null: none), or dotenv's, where the environment
    // wrangler runs in gives a value of its own.
    const json = write(
      "gate.json",
      JSON.stringify({
        IDP_CLIENT_ID: "proxy-app",
        IDP_CLIENT_SECRET: "  ",
        ORIGIN_USER_SECRETS: '{"ann@acme.com": "ann-key", "bob": "bob-key"}',
        UPSTREAM_CLIENT_ID: null,
      }),
    );
    const fromJson = checkedHere(["--config", path, "--env", "gate", "--secrets-file", json]);
    expect(fromJson.clean).toBe(false);
    expect(sections(fromJson.out).get("[env.gate]")).toEqual({
      verdict: "2 problems",
      lines: [
        `IDP_CLIENT_SECRET: must not be empty (as ${json} sets it)`,
        `ORIGIN_USER_SECRETS: has an entry (number 2) that is not an email address (as ${json} sets it)`,
        `note: ${json} sets IDP_CLIENT_ID, IDP_CLIENT_SECRET, ORIGIN_USER_SECRETS for this deploy: checked with them`,
      ],
    });
    for (const value of ["proxy-app", "ann-key", "bob-key", "ann@acme.com"]) {
      expect(fromJson.out).not.toContain(value);
    }

    const dotenv = write(
      "gate.env",
      'IDP_CLIENT_ID=proxy-app\nIDP_CLIENT_SECRET=pa$$word-secret\nORIGIN_USER_SECRETS=\'{"ann@acme.com": "ann-key"}\'\n',
    );
    const before = process.env.IDP_CLIENT_ID;
    process.env.IDP_CLIENT_ID = " ";
    try {
      const fromDotenv = checkedHere(["--config", path, "--env", "gate", "--secrets-file", dotenv]);
      expect(sections(fromDotenv.out).get("[env.gate]")).toEqual({
        verdict: "1 problem",
        lines: [
          `IDP_CLIENT_ID: must not be empty (as ${dotenv} sets it)`,
          `note: ${dotenv} sets IDP_CLIENT_ID, IDP_CLIENT_SECRET, ORIGIN_USER_SECRETS for this deploy: checked with them`,
          `note: IDP_CLIENT_ID is set in the environment too, and wrangler deploy uploads that value, not the file's: checked with it`,
          "note: IDP_CLIENT_SECRET holds a $ in the file that wrangler deploy reads as a variable's name ($NAME) and replaces with that variable of the environment (or nothing): checked as the file writes it; write \\$ for a $ of the secret's own, or write the file as JSON",
        ],
      });
      for (const value of ["proxy-app", "word-secret", "ann-key"]) {
        expect(fromDotenv.out).not.toContain(value);
      }
    } finally {
      if (before === undefined) delete process.env.IDP_CLIENT_ID;
      else process.env.IDP_CLIENT_ID = before;
    }
  });

  it("tells a file wrangler would refuse, deploying nothing, and is one tenant's", () => {
    const refused: Array<[string, string]> = [
      [join(dir, "missing.env"), "cannot be read (ENOENT)"],
      [
        write("number.json", '{"ORIGIN_URL": 7}'),
        "holds ORIGIN_URL as a number: wrangler deploy takes text (a string) or null alone, and refuses the file",
      ],
      [
        write("list.json", '"ORIGIN_URL"'),
        "is JSON but no object of names and values: wrangler deploy refuses it",
      ],
      [
        write("prose.env", "this file holds no secret\n"),
        "holds no NAME=value line, and is no JSON: wrangler deploy refuses it",
      ],
    ];
    for (const [file, says] of refused) {
      const { status, out } = deployed(["--env", "acme", "--dry-run", "--secrets-file", file]);
      expect(status, file).toBe(1);
      expect(out).toContain(`${file}: ${says}`);
      expect(out).toContain("Not deployed");
    }
    // npm run check reads it for one tenant, as a deploy is.
    expect(() => check(["--secrets-file", join(dir, "one.env")])).toThrow(
      expect.objectContaining({
        constructor: Refused,
        message: expect.stringContaining("--secrets-file is one tenant's: give --env NAME"),
      }),
    );
  });
});

describe("npm run check of the top level, as npm run dev runs it", () => {
  const { dir, path } = scratchConfig(
    "dev-check",
    `secrets = { required = ["ORIGIN_USER_SECRETS", "IDP_CLIENT_SECRET"] }
[exports.SignInBudget]
type = "durable-object"
storage = "sqlite"
[vars]
${VALID}
PROFILE = "openai"
AUTH_MODE = "gate"
IDP_ISSUER = "https://accounts.google.com"
IDP_CLIENT_ID = "proxy-app"
ALLOWED_DOMAINS = "acme.com"
${SIGN_IN("x", 7004).replaceAll("env.x.", "")}`,
  );
  // What wrangler dev reads beside wrangler.toml: the local values of the secrets it declares, and
  // of the vars they override.
  writeFileSync(
    join(dir, ".dev.vars"),
    'ORIGIN_USER_SECRETS={"ann@acme.com": not-json}\nPROFILE="claude-secret-typo"\nIDP_CLIENT_SECRET=dev-secret\n',
  );
  const { status, out } = npmRun("check", ["--config", path, "--top-level"]);

  it("checks what .dev.vars sets, as wrangler dev reads it, and echoes none of its values", () => {
    expect(status).toBe(1);
    const top = sections(out).get("the top level (local development)");
    expect(top?.verdict).toBe("2 problems");
    expect(top?.lines).toEqual([
      expect.stringMatching(/^PROFILE: must be one of openai, /),
      "ORIGIN_USER_SECRETS: must be JSON text: an object of emails and keys",
      "note: .dev.vars sets IDP_CLIENT_SECRET, ORIGIN_USER_SECRETS, PROFILE for local development (wrangler dev reads it): checked with them",
    ]);
    expect(out).not.toContain("claude-secret-typo");
    expect(out).not.toContain("dev-secret");
  });
});

describe("npm run check of an environment whose name a shell would run", () => {
  it("gives the command that creates its namespace with the name as one shell word", () => {
    const dir = mkdtempSync(join(scratch, "shell-"));
    const marker = join(dir, "ran");
    const name = `x$(touch ${marker})'y'`;
    const path = join(dir, "wrangler.toml");
    writeFileSync(
      path,
      `name = "shell"
main = "${join(ROOT, "src/index.ts")}"
compatibility_date = "2026-11-01"
[env.${JSON.stringify(name)}.vars]
${VALID}
[[env.${JSON.stringify(name)}.kv_namespaces]]
binding = "TOOL_MAP"
id = "00000000000000000000000000000000"
`,
    );
    const { notes } = checkEnvironment(readEnvironment(name, { configPath: path }));
    const command = /`(npx wrangler kv namespace create TOOL_MAP --env .*)`/.exec(
      notes.find(({ setting }) => setting === "TOOL_MAP")?.text ?? "",
    )?.[1];
    expect(command).toBeDefined();
    // Pasted into a shell, it names the environment, and runs nothing the name holds.
    const echoed = spawnSync("sh", ["-c", `set -- ${command}; printf %s "$8"`], {
      encoding: "utf8",
    });
    expect(echoed.stdout).toBe(name);
    expect(existsSync(marker)).toBe(false);
  });
});

describe("npm run check of a top level that declares its secrets, as wrangler dev reads .dev.vars", () => {
  // With `secrets` declared, wrangler dev takes from .dev.vars (or .env) only those secrets and the
  // vars they override: the rest never reaches the Worker, whatever check made of it.
  const { dir, path } = scratchConfig(
    "dev-declared",
    `secrets = { required = ["PUBLIC_URL"] }
[[kv_namespaces]]
binding = "TOOL_MAP"
id = "local-tool-map"
`,
  );
  writeFileSync(
    join(dir, ".dev.vars"),
    "PUBLIC_URL=http://localhost:8787\nORIGIN_URL=http://127.0.0.1:8788/mcp\nMAX_TOOLS=1\nCLOUDFLARE_ACCOUNT_ID=0123\n",
  );

  it("tells a setting .dev.vars sets that wrangler dev leaves out, and checks without it", () => {
    const { problems, notes } = checkEnvironment(readEnvironment(undefined, { configPath: path }));
    const leftOut =
      "is set in .dev.vars, which wrangler dev leaves out: with secrets declared, it passes on from there only those and the vars they override; declare it (secrets = { required = [...] }) or set it in [vars]";
    // The Worker under wrangler dev has no ORIGIN_URL (every request a 500), and MAX_TOOLS' default.
    expect(problems).toEqual([
      {
        setting: "ORIGIN_URL",
        text: 'is missing; set it to the full URL of the origin\'s MCP endpoint; if it is a secret (wrangler secret put), declare it in the top level: secrets = { required = ["ORIGIN_URL"] }',
      },
      { setting: "MAX_TOOLS", text: leftOut },
      { setting: "ORIGIN_URL", text: leftOut },
    ]);
    // Wrangler's own names, which a .env holds for wrangler itself, are no setting left out.
    expect(notes).toEqual([
      {
        setting: ".dev.vars",
        text: "sets PUBLIC_URL for local development (wrangler dev reads it): checked with them",
      },
    ]);
  });
});

describe("npm run check of a top level whose declared secret .dev.vars does not set", () => {
  // wrangler dev warns, and starts the Worker without it: no stand-in is set at Cloudflare here.
  const { dir, path } = scratchConfig(
    "dev-unset",
    `secrets = { required = ["ORIGIN_URL", "PUBLIC_URL"] }
[[kv_namespaces]]
binding = "TOOL_MAP"
id = "local-tool-map"
`,
  );
  writeFileSync(join(dir, ".dev.vars"), "PUBLIC_URL=http://localhost:8787\n");

  it("tells it, as the Worker under wrangler dev has none of it", () => {
    const { problems, notes } = checkEnvironment(readEnvironment(undefined, { configPath: path }));
    expect(problems).toEqual([
      {
        setting: "ORIGIN_URL",
        text: "is missing; set it to the full URL of the origin's MCP endpoint",
      },
      {
        setting: "ORIGIN_URL",
        text: "is a declared secret that .dev.vars does not set: wrangler dev starts the Worker without it",
      },
    ]);
    expect(notes).toEqual([
      {
        setting: ".dev.vars",
        text: "sets PUBLIC_URL for local development (wrangler dev reads it): checked with them",
      },
    ]);
  });
});

describe("npm run check of a tenant whose Worker name another section has", () => {
  /** A tenant `env` with `section`'s keys (its name, or none). */
  const TENANT = (env: string, section: string) => `[env.${env}]
${section}
[env.${env}.vars]
${VALID}
WRANGLER_ENV = "${env}"
${KV(env)}`;
  const { path } = scratchConfig(
    "same-name",
    [
      TENANT("alpha", 'name = "tenant-alpha"'),
      // alpha's section copied for a new tenant, its name left as it was.
      TENANT("beta", 'name = "tenant-alpha"'),
      // No name of its own: wrangler names its Worker "same-name-gamma", which delta's is too.
      TENANT("gamma", ""),
      TENANT("delta", 'name = "same-name-gamma"'),
      TENANT("epsilon", 'name = "same-name-epsilon"'),
    ].join("\n"),
  );
  const checked = (env: string) => checkEnvironment(readEnvironment(env, { configPath: path }));

  it("tells it in each: a deploy of one replaces the other's Worker, which keeps its secrets", () => {
    const told = (worker: string, other: string) => ({
      setting: "name",
      text: `${worker} is also the Worker of [env.${other}]: a deploy of either replaces the other's, whose secrets it keeps and sends where its own settings say; give each section a name of its own`,
    });
    expect(checked("alpha").problems).toEqual([told("tenant-alpha", "beta")]);
    expect(checked("beta").problems).toEqual([told("tenant-alpha", "alpha")]);
    expect(checked("gamma").problems).toEqual([told("same-name-gamma", "delta")]);
    expect(checked("delta").problems).toEqual([told("same-name-gamma", "gamma")]);
    expect(checked("epsilon").problems).toEqual([]);
  });
});

describe("npm run check of tenants that share a namespace, a rate limit, a Durable Object or a key", () => {
  /** A namespace id of the test's own: `n` in hex, 32 digits. */
  const id = (n: number) => n.toString(16).padStart(32, "0");
  const kv = (env: string, binding: string, namespace: string) =>
    `[[env.${env}.kv_namespaces]]\nbinding = "${binding}"\nid = "${namespace}"\n`;
  /** A tenant `env` in relay mode, in front of `origin` (a declared secret where `undefined`). */
  const RELAY = (env: string, origin: string | undefined, toolMap: string) => `[env.${env}]
${origin === undefined ? 'secrets = { required = ["ORIGIN_URL"] }' : ""}
[env.${env}.vars]
${origin === undefined ? "" : `ORIGIN_URL = "${origin}"`}
WRANGLER_ENV = "${env}"
${kv(env, "TOOL_MAP", toolMap)}`;
  /** A tenant `env` in broker mode: its namespaces, rate limit and, with `script`, another Worker's budget. */
  const BROKER = (
    env: string,
    ids: { toolMap: string; oauth: string },
    limit: number,
    script?: string,
  ) => `[env.${env}.vars]
${VALID}
WRANGLER_ENV = "${env}"
AUTH_MODE = "broker"
${kv(env, "TOOL_MAP", ids.toolMap)}
${kv(env, "OAUTH_KV", ids.oauth)}
[[env.${env}.ratelimits]]
name = "SIGN_IN_RATE_LIMIT"
namespace_id = "${limit}"
simple = { limit = 30, period = 60 }
[[env.${env}.durable_objects.bindings]]
name = "SIGN_IN_BUDGET"
class_name = "SignInBudget"
${script === undefined ? "" : `script_name = "${script}"`}
`;
  /** A tenant `env` in front of `origin` whose users' keys are in `users`, and the origin's in a store. */
  const KEYS = (
    env: string,
    origin: string,
    ids: { toolMap: string; users: string },
  ) => `${RELAY(env, origin, ids.toolMap)}
${kv(env, "ORIGIN_USER_SECRETS", ids.users)}
[[env.${env}.secrets_store_secrets]]
binding = "ORIGIN_SECRET"
store_id = "${id(99)}"
secret_name = "mu-origin-key"
`;
  const { path } = scratchConfig(
    "shared",
    [
      `[exports.SignInBudget]\ntype = "durable-object"\nstorage = "sqlite"`,
      BROKER("alpha", { toolMap: id(1), oauth: id(2) }, 7001),
      // alpha's section copied for a new tenant, its name the only change (wrangler names it
      // shared-beta): the same namespaces, and the same rate limit.
      BROKER("beta", { toolMap: id(1), oauth: id(2) }, 7001),
      // Namespaces of its own, and alpha's Worker's budget.
      BROKER("gamma", { toolMap: id(3), oauth: id(4) }, 7002, "shared-alpha"),
      BROKER("theta", { toolMap: id(5), oauth: id(6) }, 7003),
      // theta's grants as iota's tool map.
      RELAY("iota", "https://o.example/mcp", id(6)),
      // One tool map in front of other origins: kept apart by ORIGIN_URL's digest.
      RELAY("delta", "https://delta.example/mcp", id(7)),
      RELAY("epsilon", "https://epsilon.example/mcp", id(7)),
      RELAY("zeta", undefined, id(7)),
      // Not created yet: each gets its own at `wrangler kv namespace create`.
      RELAY("kappa", "https://o.example/mcp", PLACEHOLDER_ID),
      RELAY("lambda", "https://o.example/mcp", PLACEHOLDER_ID),
      // One origin's key, and its users' keys, bound in front of another origin (nu, mu's section
      // copied), and in front of the same one (xi), whose users' keys are omicron's tool map.
      KEYS("mu", "https://mu.example/mcp", { toolMap: id(8), users: id(9) }),
      KEYS("nu", "https://nu.example/mcp", { toolMap: id(10), users: id(9) }),
      KEYS("xi", "https://mu.example/mcp", { toolMap: id(11), users: id(12) }),
      RELAY("omicron", "https://omicron.example/mcp", id(12)),
    ].join("\n"),
  );
  const checked = (env: string) => checkEnvironment(readEnvironment(env, { configPath: path }));
  const create = (binding: string, env: string) =>
    `create one for this section: \`npx wrangler kv namespace create ${binding} --env ${env}\``;
  const grants = (env: string, other: string) => ({
    setting: `env.${env}.kv_namespaces[OAUTH_KV].id`,
    text: `is [env.${other}]'s too (env.${other}.kv_namespaces[OAUTH_KV].id): one namespace would hold both tenants' sign-ins, so each tenant's Worker reads and writes the other's grants, token hashes and client registrations (gate mode's sign-out revokes a user's grants at both); ${create("OAUTH_KV", env)}`,
  });
  /** `env`'s `binding` is `other`'s `otherBinding`, and one of them holds credentials: `reach`. */
  const inReach = (
    env: string,
    binding: string,
    other: string,
    otherBinding: string,
    reach: string,
  ) => ({
    setting: `env.${env}.kv_namespaces[${binding}].id`,
    text: `is [env.${other}]'s too (env.${other}.kv_namespaces[${otherBinding}].id): ${reach}; ${create(binding, env)}`,
  });
  const usersElsewhere = (env: string, other: string) => ({
    setting: `env.${env}.kv_namespaces[ORIGIN_USER_SECRETS].id`,
    text: `is [env.${other}]'s too (env.${other}.kv_namespaces[ORIGIN_USER_SECRETS].id), in front of another ORIGIN_URL: each tenant's Worker would send its users' keys for the other's origin to its own; ${create("ORIGIN_USER_SECRETS", env)}`,
  });
  const keyElsewhere = (env: string, other: string) => ({
    setting: `env.${env}.secrets_store_secrets[ORIGIN_SECRET]`,
    text: `is [env.${other}]'s too (env.${other}.secrets_store_secrets[ORIGIN_SECRET]), in front of another ORIGIN_URL: each tenant's Worker would send the key of the other's origin to its own; bind each origin's own key`,
  });
  const limit = (env: string, other: string) => ({
    setting: `env.${env}.ratelimits[SIGN_IN_RATE_LIMIT].namespace_id`,
    text: `is [env.${other}]'s too (env.${other}.ratelimits[SIGN_IN_RATE_LIMIT].namespace_id): one limit counts both tenants' sign-in requests per client address, so one tenant's traffic spends the other's; give each section a namespace_id no other section has (npm run tenant takes the next one free)`,
  });
  const budget = (env: string, other: string) => ({
    setting: `env.${env}.durable_objects.bindings[SIGN_IN_BUDGET]`,
    text: `is [env.${other}]'s too (env.${other}.durable_objects.bindings[SIGN_IN_BUDGET], the class SignInBudget of the Worker shared-alpha): one object a day counts both tenants' sign-in writes, so one tenant's sign-ins spend the other's SIGN_IN_DAILY_WRITES; bind each section's own Worker's class (class_name = "SignInBudget", no script_name)`,
  });
  const toolMap = (env: string, other: string) => ({
    setting: `env.${env}.kv_namespaces[TOOL_MAP].id`,
    text: `is [env.${other}]'s too (env.${other}.kv_namespaces[TOOL_MAP].id), in front of the same ORIGIN_URL: one tool map would serve both, so a held change accepted for one (npm run holds -- accept) is accepted for the other's callers, and each tenant's listings pin definitions for the other's; ${create("TOOL_MAP", env)}`,
  });
  const unknownOrigin = (env: string, other: string) => ({
    setting: `env.${env}.kv_namespaces[TOOL_MAP].id`,
    text: `is [env.${other}]'s too (env.${other}.kv_namespaces[TOOL_MAP].id): tool maps are kept apart by ORIGIN_URL, and ORIGIN_URL is a secret here, which check does not read: under the same ORIGIN_URL one map would serve both (a held change accepted for one is accepted for the other's callers): make sure they differ, or ${create("TOOL_MAP", env)}`,
  });

  it("tells each tenant whose sign-in state another reaches, by path and by the other tenant", () => {
    expect(checked("alpha").problems).toEqual([
      toolMap("alpha", "beta"),
      grants("alpha", "beta"),
      limit("alpha", "beta"),
      budget("alpha", "gamma"),
    ]);
    expect(checked("beta").problems).toEqual([
      toolMap("beta", "alpha"),
      grants("beta", "alpha"),
      limit("beta", "alpha"),
    ]);
    expect(checked("gamma").problems).toEqual([budget("gamma", "alpha")]);
    // Another binding of the same namespace: theta's grants would be in iota's tool map.
    const grantsOf = "grants, token hashes and client registrations";
    expect(checked("theta").problems).toEqual([
      inReach(
        "theta",
        "OAUTH_KV",
        "iota",
        "TOOL_MAP",
        `this tenant's ${grantsOf} would be in reach of [env.iota]'s Worker`,
      ),
    ]);
    expect(checked("iota").problems).toEqual([
      inReach(
        "iota",
        "TOOL_MAP",
        "theta",
        "OAUTH_KV",
        `[env.theta]'s ${grantsOf} would be in reach of this tenant's`,
      ),
    ]);
  });

  it("tells each tenant whose origin keys another sends to its own origin, or has in reach", () => {
    // Their relay mode refuses the keys too (only gate mode reads them): not what this is about.
    const shared = (env: string) =>
      checked(env).problems.filter(({ setting }) => setting.startsWith("env."));
    expect(shared("mu")).toEqual([usersElsewhere("mu", "nu"), keyElsewhere("mu", "nu")]);
    expect(shared("nu")).toEqual([
      usersElsewhere("nu", "mu"),
      keyElsewhere("nu", "mu"),
      keyElsewhere("nu", "xi"),
    ]);
    // mu's key in front of mu's origin is no harm; its users' keys as omicron's tool map are.
    const keysOf = "users' keys for its origin";
    expect(shared("xi")).toEqual([
      inReach(
        "xi",
        "ORIGIN_USER_SECRETS",
        "omicron",
        "TOOL_MAP",
        `this tenant's ${keysOf} would be in reach of [env.omicron]'s Worker`,
      ),
      keyElsewhere("xi", "nu"),
    ]);
    expect(shared("omicron")).toEqual([
      inReach(
        "omicron",
        "TOOL_MAP",
        "xi",
        "ORIGIN_USER_SECRETS",
        `[env.xi]'s ${keysOf} would be in reach of this tenant's`,
      ),
    ]);
  });

  it("lets tenants in front of different origins share a tool map, and notes one it cannot compare", () => {
    expect(checked("delta")).toMatchObject({
      problems: [],
      notes: [unknownOrigin("delta", "zeta")],
    });
    expect(checked("epsilon")).toMatchObject({
      problems: [],
      notes: [unknownOrigin("epsilon", "zeta")],
    });
    expect(checked("zeta").problems).toEqual([]);
    expect(checked("zeta").notes).toEqual([
      unknownOrigin("zeta", "delta"),
      unknownOrigin("zeta", "epsilon"),
      { setting: "ORIGIN_URL", text: "is a secret: checked when the Worker starts, never here" },
    ]);
    // A placeholder is no namespace yet.
    expect(checked("kappa").problems).toEqual([]);
  });

  it("refuses them across every tenant at once, as npm run check runs", () => {
    const { status, out } = npmRun("check", ["--config", path]);
    expect(status).toBe(1);
    const verdicts = Object.fromEntries(
      [...sections(out)].map(([label, { verdict }]) => [label, verdict]),
    );
    expect(verdicts).toMatchObject({
      "[env.alpha]": "4 problems",
      "[env.beta]": "3 problems",
      "[env.gamma]": "1 problem",
      "[env.theta]": "1 problem",
      "[env.iota]": "1 problem",
      "[env.delta]": "ok",
      "[env.epsilon]": "ok",
      "[env.zeta]": "ok",
      "[env.kappa]": "ok",
      "[env.lambda]": "ok",
    });
  });
});

describe("npm run check of the hosts a tenant answers for, against where wrangler serves it", () => {
  /** A tenant `env` with `section`'s keys (routes, workers_dev) and `hosts` as its ALLOWED_HOSTS. */
  const TENANT = (env: string, section: string, hosts: string) => `[env.${env}]
name = "mcp-edge-rewriter-${env}"
${section}
[env.${env}.vars]
${VALID}
WRANGLER_ENV = "${env}"
ALLOWED_HOSTS = "${hosts}"
${KV(env)}`;
  const { path } = scratchConfig(
    "hosts-check",
    [
      // A custom domain added by hand after npm run tenant -- add, ALLOWED_HOSTS left as it was.
      TENANT(
        "added",
        'workers_dev = true\nroutes = [{ pattern = "mcp.acme.example", custom_domain = true }, { pattern = "API.acme.example/mcp*", zone_name = "acme.example" }]',
        "mcp-edge-rewriter-added.acme-corp.workers.dev,mcp.acme.example",
      ),
      // No workers_dev and no routes: wrangler serves it at workers.dev.
      TENANT("unsaid", "", "mcp.acme.example"),
      TENANT(
        "served",
        'workers_dev = false\nroutes = [{ pattern = "mcp.acme.example", custom_domain = true }, "*.acme.example/*"]',
        "mcp.acme.example:443",
      ),
      TENANT("any", 'routes = ["mcp.acme.example/*"]', ""),
    ].join("\n"),
  );
  const checked = (env: string) => checkEnvironment(readEnvironment(env, { configPath: path }));

  it("tells each host a route or workers.dev serves that ALLOWED_HOSTS leaves out: every request there gets 403", () => {
    expect(checked("added").problems).toEqual([
      {
        setting: "ALLOWED_HOSTS",
        text: "leaves out api.acme.example, where a route of this environment serves the Worker: every request there would be refused with 403; add it",
      },
    ]);
    // Told beside another setting's mistake, not after it is fixed.
    const both = checkEnvironment(
      readEnvironment("added", { configPath: path, vars: { MAX_TOOLS: "zero" } }),
    );
    expect(both.problems.map(({ setting }) => setting)).toEqual(["MAX_TOOLS", "ALLOWED_HOSTS"]);
    expect(checked("unsaid").problems).toEqual([
      {
        setting: "ALLOWED_HOSTS",
        text: "leaves out mcp-edge-rewriter-unsaid.<your subdomain>.workers.dev, where wrangler serves the Worker (workers_dev is true, or unset without routes): every request there would be refused with 403; add it, or set workers_dev = false",
      },
    ]);
  });

  it("is clean where ALLOWED_HOSTS holds every host served, or is empty (any host)", () => {
    // A wildcard route's hosts are not known offline; ALLOWED_HOSTS names none of them.
    expect(checked("served").problems).toEqual([]);
    expect(checked("any").problems).toEqual([]);
  });
});

describe("npm run check of gate tenants, as wrangler.toml's comments and docs/sign-in.md set them up", () => {
  const GATE = (env: string, limit: number, vars = "") => `[env.${env}.vars]
${VALID}
WRANGLER_ENV = "${env}"
AUTH_MODE = "gate"
${vars}
${SIGN_IN(env, limit)}`;
  const { path } = scratchConfig(
    "gate-check",
    `[exports.SignInBudget]
type = "durable-object"
storage = "sqlite"

[env.store]
secrets = { required = ["IDP_CLIENT_ID"] }
${GATE("store", 7001, 'IDP_ISSUER = "https://accounts.google.com"\nALLOWED_DOMAINS = "acme.com"')}
[[env.store.secrets_store_secrets]]
binding = "ORIGIN_SECRET"
store_id = "0123456789abcdef0123456789abcdef"
secret_name = "acme-origin-key"

[env.per-user]
secrets = { required = ["IDP_CLIENT_ID", "ORIGIN_USER_SECRETS"] }
${GATE("per-user", 7002)}

[env.kv-key]
secrets = { required = ["IDP_CLIENT_ID"] }
${GATE("kv-key", 7003, 'IDP_ISSUER = "https://accounts.google.com"\nALLOWED_DOMAINS = "acme.com"')}
${KV("kv-key", "ORIGIN_SECRET")}
`,
  );
  /** What check says of `env`, asked in this process. */
  const checked = (env: string) => checkEnvironment(readEnvironment(env, { configPath: path }));

  it("takes the origin's key from a Secrets Store binding, as the Worker does", () => {
    expect(checked("store").problems).toEqual([]);
  });

  it("tells an origin's key bound as a KV namespace, whose get() needs a key the proxy has not", () => {
    expect(checked("kv-key").problems).toEqual([
      { setting: "ORIGIN_SECRET", text: "must be a Worker secret or a Secrets Store binding" },
    ]);
  });

  it("tells what a gate tenant misses beside a declared ORIGIN_USER_SECRETS, which it cannot read", () => {
    // The Worker, given the secret, refuses to start without an issuer or anyone allowed.
    expect(checked("per-user").problems.map(({ setting }) => setting)).toEqual([
      "IDP_ISSUER",
      "ALLOWED_USERS",
    ]);
  });
});

describe("npm run check of a tenant whose ORIGIN_URL is a secret, beside the top level's var", () => {
  // The shipped wrangler.toml's top level sets ORIGIN_URL for npm run dev; a tenant whose URL
  // carries a key keeps it out of its vars, as a declared secret (docs/configuration.md). wrangler
  // warns of every top-level var a section leaves out, vars not being inherited: the secret is
  // that setting there, and no reason to refuse the deploy.
  const { path } = scratchConfig(
    "origin-secret",
    `
[vars]
ORIGIN_URL = "http://127.0.0.1:8788/mcp"
ALLOWED_HOSTS = "localhost,127.0.0.1,[::1]"
[[kv_namespaces]]
binding = "TOOL_MAP"
id = "local-tool-map"

[env.keyed]
name = "origin-secret-keyed"
workers_dev = true
secrets = { required = ["ORIGIN_URL"] }
[env.keyed.vars]
ALLOWED_HOSTS = "origin-secret-keyed.corp.workers.dev"
WRANGLER_ENV = "keyed"
${KV("keyed")}
[env.hostless]
name = "origin-secret-hostless"
workers_dev = true
secrets = { required = ["ORIGIN_URL"] }
[env.hostless.vars]
WRANGLER_ENV = "hostless"
${KV("hostless")}
`,
  );
  const checked = (env: string) => checkEnvironment(readEnvironment(env, { configPath: path }));

  it("is clean where the section declares it, and notes it is left to the Worker", () => {
    expect(checked("keyed")).toMatchObject({
      problems: [],
      notes: [
        { setting: "ORIGIN_URL", text: "is a secret: checked when the Worker starts, never here" },
      ],
    });
  });

  it("still tells a top-level var the section leaves out that is no declared secret", () => {
    const { problems } = checked("hostless");
    expect(problems).toEqual([
      {
        setting: "wrangler.toml",
        text: expect.stringMatching(
          /^wrangler warns: The following vars exist at the top level, but not on "env\.hostless\.vars"\..*": - ALLOWED_HOSTS$/,
        ),
      },
    ]);
  });
});

describe("npm run check of declared secrets only another AUTH_MODE reads", () => {
  // A tenant taken back to relay mode, its sign-in's vars and bindings removed and its secrets'
  // declaration left: wrangler deploys it (the secrets are set at Cloudflare from before), and the
  // Worker, given them, answers every request with 500.
  const { path } = scratchConfig(
    "mode-secrets",
    `
[env.was-gate]
secrets = { required = ["IDP_CLIENT_ID", "IDP_CLIENT_SECRET", "ORIGIN_SECRET", "ORIGIN_USER_SECRETS"] }
[env.was-gate.vars]
${VALID}
WRANGLER_ENV = "was-gate"
${KV("was-gate")}
[env.was-broker]
secrets = { required = ["ORIGIN_URL", "UPSTREAM_CLIENT_ID", "UPSTREAM_CLIENT_SECRET"] }
[env.was-broker.vars]
WRANGLER_ENV = "was-broker"
${KV("was-broker")}
`,
  );
  const checked = (env: string) => checkEnvironment(readEnvironment(env, { configPath: path }));
  const otherMode = (modes: string) =>
    `is read only with AUTH_MODE=${modes}, and AUTH_MODE is relay: set AUTH_MODE, or remove this`;

  it("tells each by its name, as the Worker refuses it whatever it holds", () => {
    const wasGate = checked("was-gate");
    expect(wasGate.problems).toEqual(
      ["IDP_CLIENT_ID", "IDP_CLIENT_SECRET", "ORIGIN_SECRET", "ORIGIN_USER_SECRETS"].map(
        (setting) => ({
          setting,
          text: otherMode("gate"),
        }),
      ),
    );
    expect(wasGate.notes).toEqual([]);
    // Beside a declared secret whose value only the Worker can judge, still left to it.
    const wasBroker = checked("was-broker");
    expect(wasBroker.problems).toEqual(
      ["UPSTREAM_CLIENT_ID", "UPSTREAM_CLIENT_SECRET"].map((setting) => ({
        setting,
        text: otherMode("broker"),
      })),
    );
    expect(wasBroker.notes).toEqual([
      { setting: "ORIGIN_URL", text: "is a secret: checked when the Worker starts, never here" },
    ]);
  });
});

describe("the wrangler dev commands README, docs/ and wrangler.toml give", () => {
  const FILES = [
    "README.md",
    "wrangler.toml",
    ...readdirSync(join(ROOT, "docs")).map((file) => join("docs", file)),
  ];
  /**
   * Each paragraph's `npx wrangler dev` command: its code span or block, with the `--var`s its
   * paragraph gives in spans of their own ("with `--var AUTH_MODE:gate`"), as shell words.
   */
  function commands(): Array<{ where: string; words: string[] }> {
    const found: Array<{ where: string; words: string[] }> = [];
    for (const file of FILES) {
      const text = readFileSync(join(ROOT, file), "utf8").replace(/^# ?/gm, "");
      for (const paragraph of text.split(/\n\s*\n/)) {
        const code = [...paragraph.matchAll(/```\w*\n([\s\S]*?)```|`([^`]+)`/g)].map(
          ([, block, span]) => (block ?? span ?? "").replace(/\\\n/g, " ").trim(),
        );
        const command = code.find((text) => text.startsWith("npx wrangler dev"));
        if (command === undefined) continue;
        const more = code.filter((text) => text.startsWith("--var "));
        const words = [command, ...more]
          .join(" ")
          .match(/'[^']*'|\S+/g)
          ?.map((word) => word.replace(/^'(.*)'$/, "$1"));
        found.push({ where: `${file}: ${command}`, words: words ?? [] });
      }
    }
    return found;
  }

  it("each check clean: what they run is a Worker that starts", () => {
    const found = commands();
    expect(found.length).toBeGreaterThanOrEqual(5);
    for (const { where, words } of found) {
      const option = (name: string) =>
        words.flatMap((word, index) => (word === name ? [words[index + 1] as string] : []));
      // A placeholder stands for what the operator writes there: the demo origin, or any text.
      const vars = Object.fromEntries(
        option("--var").map((entry) => {
          const [name = "", ...value] = entry.split(":");
          const text = value.join(":");
          return [
            name,
            text === "<origin>" ? "http://127.0.0.1:8788/mcp" : text.replace(/^<.*>$/, "x"),
          ];
        }),
      );
      const [env] = option("--env");
      const config = join(ROOT, "wrangler.toml");
      // Run on this machine, where no route serves it (ALLOWED_HOSTS:localhost).
      const { problems } = checkEnvironment(readEnvironment(env, { configPath: config, vars }), {
        local: true,
      });
      expect(problems, where).toEqual([]);
    }
  });
});
