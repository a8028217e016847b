import { env as workerEnv } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseConfig, profileAt } from "../../src/config";
import { ToolRules } from "../../src/rules/tool-rules";
import { profileOf } from "../../src/schemas/profile";

/** Settings as wrangler hands them over, with the tool map's binding every environment has. */
const env = (vars: Record<string, unknown>) =>
  ({ TOOL_MAP: workerEnv.TOOL_MAP, ...vars }) as unknown as Env;

/** One problem, at `path`, as parseConfig reports it. */
const refused = (path: string, problem: string) => ({
  kind: "invalid",
  problems: [{ setting: /^[A-Z_]+/.exec(path)?.[0], path, problem }],
});

/** The bindings broker and gate mode need, as the tests' runtime binds them. */
const SIGN_IN = {
  OAUTH_KV: workerEnv.OAUTH_KV,
  SIGN_IN_RATE_LIMIT: workerEnv.SIGN_IN_RATE_LIMIT,
  SIGN_IN_BUDGET: workerEnv.SIGN_IN_BUDGET,
};

describe("parseConfig", () => {
  it("applies the documented defaults", () => {
    expect(parseConfig(env({ ORIGIN_URL: "https://mcp.example.com/mcp" }))).toEqual({
      kind: "valid",
      config: {
        originUrl: new URL("https://mcp.example.com/mcp"),
        mcpPath: "/mcp",
        toolMapKv: workerEnv.TOOL_MAP,
        originTimeoutMs: 30_000,
        maxBodyBytes: 4_194_304,
        maxBatchMessages: 32,
        maxLocalAnswerBytes: 1_048_576,
        profile: profileOf("openai"),
        profileLimits: { nameMaxLength: undefined, maxTools: undefined },
        policy: { rules: expect.any(ToolRules), changes: "log", scope: "definition" },
        argumentValidation: "warn",
        allowedHosts: [],
        publicOrigin: undefined,
        auth: { mode: "relay" },
      },
    });
  });

  it("refuses a missing TOOL_MAP binding or ORIGIN_URL by name, absent as wrangler leaves them", () => {
    expect(parseConfig({ ORIGIN_URL: "https://o.example/mcp" } as unknown as Env)).toEqual(
      refused("TOOL_MAP", "is missing: bind a KV namespace as TOOL_MAP"),
    );
    expect(parseConfig({ TOOL_MAP: workerEnv.TOOL_MAP } as unknown as Env)).toEqual(
      refused("ORIGIN_URL", "is missing; set it to the full URL of the origin's MCP endpoint"),
    );
  });

  it("refuses a TOOL_MAP or OAUTH_KV bound to another kind of binding, whose get() is no KV's", () => {
    // A Durable Object namespace has a get() too (of an id): the tool map would fail on every read.
    expect(
      parseConfig({
        ORIGIN_URL: "https://o.example/mcp",
        TOOL_MAP: workerEnv.SIGN_IN_BUDGET,
      } as unknown as Env),
    ).toEqual(refused("TOOL_MAP", "must be a KV namespace binding ([[kv_namespaces]])"));
    expect(
      parseConfig(
        env({
          ORIGIN_URL: "https://o.example/mcp",
          AUTH_MODE: "broker",
          ...SIGN_IN,
          OAUTH_KV: workerEnv.SIGN_IN_BUDGET,
        }),
      ),
    ).toEqual(refused("OAUTH_KV", "must be a KV namespace binding ([[kv_namespaces]])"));
  });

  it.each([
    ["/", "must be a plain path like /mcp: no query, no trailing /"],
    ["/mcp/", "must be a plain path like /mcp: no query, no trailing /"],
    ["/mcp?x=1", "must be a plain path like /mcp: no query, no trailing /"],
    [
      "/%6dcp",
      "must have one reading: no %-escapes of letters, digits or -._~, no . or .. or empty segments",
    ],
    [
      "/a/../mcp",
      "must have one reading: no %-escapes of letters, digits or -._~, no . or .. or empty segments",
    ],
    [
      "/a//mcp",
      "must have one reading: no %-escapes of letters, digits or -._~, no . or .. or empty segments",
    ],
    [
      "/healthz",
      "must not be one of the proxy's own routes (/healthz, /readyz, /authorize, /oauth, /.well-known) or under one",
    ],
    [
      "/oauth/mcp",
      "must not be one of the proxy's own routes (/healthz, /readyz, /authorize, /oauth, /.well-known) or under one",
    ],
    [
      "/.well-known/mcp",
      "must not be one of the proxy's own routes (/healthz, /readyz, /authorize, /oauth, /.well-known) or under one",
    ],
  ])("refuses MCP_PATH %s, which would clash or has no single reading", (path, problem) => {
    expect(parseConfig(env({ ORIGIN_URL: "https://o.example/mcp", MCP_PATH: path }))).toEqual(
      refused("MCP_PATH", problem),
    );
  });

  it("accepts an MCP_PATH of its own, however deep", () => {
    const result = parseConfig(
      env({ ORIGIN_URL: "https://o.example/mcp", MCP_PATH: "/v1/tenants/acme_2/mcp" }),
    );
    expect(result.kind === "valid" && result.config.mcpPath).toBe("/v1/tenants/acme_2/mcp");
  });

  it("refuses an MCP_PATH a request's path never is: a character a URL writes %-escaped", () => {
    // A client's request for /caf\u00e9 or /mcp v2 arrives as /caf%C3%A9 or /mcp%20v2: every one a 404.
    for (const path of ["/caf\u00e9", "/mcp v2", "/mcp<1>", '/m"cp', "/{tenant}/mcp"]) {
      expect(parseConfig(env({ ORIGIN_URL: "https://o.example/mcp", MCP_PATH: path }))).toEqual(
        refused(
          "MCP_PATH",
          'must be written as a URL writes it: a space, "<>`{} and each character outside ASCII %-escaped (/caf%C3%A9 for /caf\u00e9)',
        ),
      );
    }
    const escaped = parseConfig(
      env({ ORIGIN_URL: "https://o.example/mcp", MCP_PATH: "/caf%C3%A9" }),
    );
    expect(escaped.kind === "valid" && escaped.config.mcpPath).toBe("/caf%C3%A9");
  });

  it("reads numbers given as strings (wrangler vars) or numbers (TOML integers)", () => {
    const result = parseConfig(
      env({
        ORIGIN_URL: " http://127.0.0.1:9000/rpc ",
        ORIGIN_TIMEOUT_MS: "2500",
        MAX_BODY_BYTES: 1024,
        MAX_BATCH_MESSAGES: "256",
        MAX_LOCAL_ANSWER_BYTES: 262_144,
      }),
    );
    expect(result).toMatchObject({
      kind: "valid",
      config: {
        originTimeoutMs: 2500,
        maxBodyBytes: 1024,
        maxBatchMessages: 256,
        maxLocalAnswerBytes: 262_144,
      },
    });
    expect(result.kind === "valid" && result.config.originUrl.href).toBe(
      "http://127.0.0.1:9000/rpc",
    );
  });

  it("reads call analytics' sampling rate as a string or a number, a tenth of answers unless set", () => {
    const CALLS: AnalyticsEngineDataset = { writeDataPoint: () => {} };
    const rateOf = (vars: Record<string, unknown>) => {
      const result = parseConfig(
        env({ ORIGIN_URL: "https://o.example/mcp", WRANGLER_ENV: "acme", ...vars }),
      );
      return result.kind === "valid" ? result.config.calls?.answerSamplingRate : result;
    };
    expect(rateOf({ CALLS })).toBe(0.1);
    expect(rateOf({ CALLS, CALLS_ANSWER_SAMPLING_RATE: " 0.05 " })).toBe(0.05);
    expect(rateOf({ CALLS, CALLS_ANSWER_SAMPLING_RATE: 1 })).toBe(1);
    expect(rateOf({ CALLS, CALLS_ANSWER_SAMPLING_RATE: "0" })).toBe(0);
    // Without the dataset there is nothing to sample.
    expect(rateOf({ CALLS_ANSWER_SAMPLING_RATE: "0.5" })).toBeUndefined();
  });

  it("needs the tenant's WRANGLER_ENV beside CALLS, the points' index, and says so by its name alone", () => {
    const CALLS: AnalyticsEngineDataset = { writeDataPoint: () => {} };
    const origin = "https://o.example/mcp?key=k-3f1a";
    expect(parseConfig(env({ ORIGIN_URL: origin, CALLS }))).toEqual(
      refused(
        "WRANGLER_ENV",
        "is required with the CALLS binding: each data point is indexed by it; set it to the name of this [env.NAME] (npm run tenant writes it)",
      ),
    );
    const named = parseConfig(env({ ORIGIN_URL: origin, CALLS, WRANGLER_ENV: "acme" }));
    expect(named.kind === "valid" && named.config.calls?.environment).toBe("acme");
    // A name that is no environment's is told as before, whether CALLS is bound or not.
    expect(parseConfig(env({ ORIGIN_URL: origin, CALLS, WRANGLER_ENV: "acme.example" }))).toEqual(
      refused(
        "WRANGLER_ENV",
        "must be the name of this environment of wrangler.toml ([env.NAME]): letters, digits, - and _",
      ),
    );
  });

  it("takes each profile's tool ceiling, lowered by MAX_TOOLS, at every profile URL", () => {
    const at = (vars: Record<string, unknown>, path: string) => {
      const result = parseConfig(env({ ORIGIN_URL: "https://o.example/mcp", ...vars }));
      return result.kind === "valid" ? profileAt(result.config, path)?.toolCeiling : "invalid";
    };
    expect(at({}, "/mcp")).toBe(128);
    expect(at({}, "/mcp/gemini")).toBe(128);
    expect(at({}, "/mcp/portable")).toBe(128);
    expect(at({}, "/mcp/anthropic")).toBeUndefined();
    expect(at({ MAX_TOOLS: "40" }, "/mcp")).toBe(40);
    expect(at({ MAX_TOOLS: "40" }, "/mcp/anthropic")).toBe(40);
    expect(at({ MAX_TOOLS: "100" }, "/mcp/gemini")).toBe(100);
    expect(at({ MAX_TOOLS: "500" }, "/mcp/gemini")).toBe(128);
  });

  const UNREAD_GLOB =
    "is not a glob picomatch can read (a { or ( left open, a \\ at its end, a range written backwards such as [z-a])";
  const STARS_BESIDE =
    "writes ** beside other characters, where picomatch reads it as *, which stops at a /: write ** as a part of its own to cross a / (github/**, **/*delete*), or * within a name";
  const RANGE =
    "writes a range in braces picomatch reads as one character of a set: write {a..e} or {1..9} (one letter or digit at each end, no step), or the names ({1,2,10,20})";
  it.each([
    [{ hide: "*delete*" }, "TOOL_RULES.hide", "must be a list of globs"],
    [{ hide: [""] }, "TOOL_RULES.hide[0]", "must not be empty"],
    [{ only: ["a.*", "exact:"] }, "TOOL_RULES.only[1]", "must name a tool after exact:"],
    // A glob that negates `exact:admin` is every tool but one named "exact:admin": `admin` too.
    [
      { only: ["!exact:admin"] },
      "TOOL_RULES.only[0]",
      "negates an exact: name, which only a glob can be: write the glob, each pattern character escaped (!report\\[1\\] for every tool but report[1])",
    ],
    // Globs picomatch makes no regular expression of: taken for ones that match no tool, each
    // left its rule off without a word (a brace left open hid nothing).
    [{ hide: ["admin.{delete,drop"] }, "TOOL_RULES.hide[0]", UNREAD_GLOB],
    [{ hide: ["a.*", "{admin"] }, "TOOL_RULES.hide[1]", UNREAD_GLOB],
    [{ only: ["files\\"] }, "TOOL_RULES.only[0]", UNREAD_GLOB],
    [{ hide: ["report[z-a]"] }, "TOOL_RULES.hide[0]", UNREAD_GLOB],
    // `**` beside a name's characters is picomatch's `*`, which stops at a `/`: `github**` hid
    // `github.delete_repo` and not `github/delete_repo`, where the docs' `**` crosses it.
    [{ hide: ["github**"] }, "TOOL_RULES.hide[0]", STARS_BESIDE],
    [{ only: ["files.*", "**delete**"] }, "TOOL_RULES.only[1]", STARS_BESIDE],
    [{ hide: ["!admin/***"] }, "TOOL_RULES.hide[0]", STARS_BESIDE],
    // picomatch reads a range in braces as a character class: `{1..20}` as `[1-20]`, one of 1, 2
    // and 0, so report_v{1..20} hid report_v0 and neither report_v15 nor report_v20.
    [{ hide: ["report_v{1..20}"] }, "TOOL_RULES.hide[0]", RANGE],
    [{ only: ["a.*", "tool{01..10}"] }, "TOOL_RULES.only[1]", RANGE],
    [{ hide: ["a{1..9..2}"] }, "TOOL_RULES.hide[0]", RANGE],
    [{ hide: ["a{^..z}"] }, "TOOL_RULES.hide[0]", RANGE],
    [
      { hid: [] },
      "TOOL_RULES.hid",
      "is not a rule (hide, only, hideAnnotated, onlyAnnotated, tools)",
    ],
    [
      { hideAnnotated: { destructiveHint: [true] } },
      "TOOL_RULES.hideAnnotated.destructiveHint",
      "must be true, false, a string or a number",
    ],
    // MCP's hints, misspelled or not booleans, match no tool: the rule was off without a word.
    [
      { hideAnnotated: { destructivehint: true } },
      "TOOL_RULES.hideAnnotated.destructivehint",
      "is not spelled as MCP names the annotation: write destructiveHint",
    ],
    [
      { onlyAnnotated: { read_only_hint: true } },
      "TOOL_RULES.onlyAnnotated.read_only_hint",
      "is not spelled as MCP names the annotation: write readOnlyHint",
    ],
    [
      { hideAnnotated: { destructiveHint: "true" } },
      "TOOL_RULES.hideAnnotated.destructiveHint",
      "must be true or false: MCP's hints are booleans",
    ],
    // An empty table matches every tool: `hideAnnotated = {}` would hide them all, silently.
    [
      { hideAnnotated: {} },
      "TOOL_RULES.hideAnnotated",
      "must name at least one annotation: an empty table matches every tool (leave the rule out instead)",
    ],
    [
      { onlyAnnotated: {} },
      "TOOL_RULES.onlyAnnotated",
      "must name at least one annotation: an empty table matches every tool (leave the rule out instead)",
    ],
    [
      { tools: { "catering.invoice": { nmae: "x" } } },
      'TOOL_RULES.tools["catering.invoice"].nmae',
      "is not a rule for a tool (name, description, appendDescription, aliases, fixed, defaults)",
    ],
    [
      { tools: { "catering.invoice": { aliases: { "payload-json": 1 } } } },
      'TOOL_RULES.tools["catering.invoice"].aliases["payload-json"]',
      "must be the declared name (a string)",
    ],
    [
      { tools: { "catering.invoice": { name: "create-invoice" } } },
      'TOOL_RULES.tools["catering.invoice"].name',
      '"create-invoice" is not a legal tool name under the portable profile (every profile is served): use letters, digits and _, starting with a letter, at most 63 characters',
    ],
    [
      { tools: { a: { name: "same" }, b: { name: "same" } } },
      "TOOL_RULES.tools.b.name",
      '"same" is already the name of a',
    ],
    [
      { tools: { a: { fixed: { owner: "me" }, defaults: { owner: "you" } } } },
      "TOOL_RULES.tools.a.defaults.owner",
      "is also fixed: a fixed value is always sent",
    ],
    [
      '{"hide": [',
      "TOOL_RULES",
      "is not valid JSON: at line 1, column 11, expected a value (an object, array, string, number, true, false or null)",
    ],
    ['["admin.*"]', "TOOL_RULES", "must be a table, or JSON text holding one"],
    // A table reads no key named so (valibot's record leaves them out, against prototype
    // pollution): a rule for such a tool, or a fixed argument so named, was dropped without a word.
    [
      '{"tools": {"__proto__": {"fixed": {"org": "acme"}}}}',
      "TOOL_RULES.tools",
      'names "__proto__", which no rule can be written for (nor "constructor" or "prototype")',
    ],
    [
      { tools: { "a.b": { fixed: { constructor: "x" } } } },
      'TOOL_RULES.tools["a.b"].fixed',
      'names "constructor", which no rule can be written for (nor "__proto__" or "prototype")',
    ],
  ])("refuses TOOL_RULES %j, naming the path of the mistake", (rules, setting, problem) => {
    expect(parseConfig(env({ ORIGIN_URL: "https://o.example/mcp", TOOL_RULES: rules }))).toEqual(
      refused(setting, problem),
    );
  });

  it("reports every problem at once, each at its path, checks across settings included", () => {
    const result = parseConfig(
      env({
        ORIGIN_URL: "https://o.example/mcp",
        MAX_TOOLS: "zero",
        SIGN_IN_DAILY_WRITES: "a lot",
        AUTH_MODE: "broker",
        UPSTREAM_CLIENT_SECRET: "s3cret",
        TOOL_RULES: {
          hid: [],
          tools: {
            a: { name: "read-file" },
            b: { name: "same" },
            c: { name: "same", fixed: { owner: "me" }, defaults: { owner: "you" } },
          },
        },
      }),
    );
    expect(result.kind === "invalid" && result.problems.map(({ path }) => path)).toEqual([
      "MAX_TOOLS",
      "TOOL_RULES.hid",
      "SIGN_IN_DAILY_WRITES",
      "OAUTH_KV",
      "SIGN_IN_RATE_LIMIT",
      "SIGN_IN_BUDGET",
      "UPSTREAM_CLIENT_ID",
      // A mistake in one part of the rules hides none in another: each tool's name is checked
      // where its own rule reads well.
      "TOOL_RULES.tools.a.name",
      "TOOL_RULES.tools.c.name",
      "TOOL_RULES.tools.c.defaults.owner",
    ]);
    const apart = parseConfig(
      env({
        ORIGIN_URL: "https://o.example/mcp",
        TOOL_RULES: {
          hide: ["admin.{delete"],
          tools: {
            a: { name: "read-file" },
            b: { nmae: "b2", name: "same" },
            c: { name: "same", fixed: { owner: "me" }, defaults: { owner: "you" } },
          },
        },
      }),
    );
    expect(apart.kind === "invalid" && apart.problems.map(({ path }) => path)).toEqual([
      "TOOL_RULES.hide[0]",
      "TOOL_RULES.tools.b.nmae",
      "TOOL_RULES.tools.a.name",
      // Not "already the name of b": b's rule, wrong in itself, names no tool yet.
      "TOOL_RULES.tools.c.defaults.owner",
    ]);
    // The names are checked against NAME_MAX_LENGTH once it reads well.
    const names = parseConfig(
      env({
        ORIGIN_URL: "https://o.example/mcp",
        NAME_MAX_LENGTH: "many",
        TOOL_RULES: { tools: { a: { name: "read-file" } } },
      }),
    );
    expect(names.kind === "invalid" && names.problems.map(({ path }) => path)).toEqual([
      "NAME_MAX_LENGTH",
    ]);
    const rules = parseConfig(
      env({
        ORIGIN_URL: "https://o.example/mcp",
        TOOL_RULES: {
          tools: {
            a: { name: "read-file" },
            b: { name: "same" },
            c: { name: "same", fixed: { owner: "me" }, defaults: { owner: "you" } },
          },
        },
      }),
    );
    expect(rules.kind === "invalid" && rules.problems.map(({ path }) => path)).toEqual([
      "TOOL_RULES.tools.a.name",
      "TOOL_RULES.tools.c.name",
      "TOOL_RULES.tools.c.defaults.owner",
    ]);
  });

  it("refuses a name it does not read, as a misspelled setting whose default would stay in force", () => {
    const result = parseConfig(
      env({
        ORIGIN_URL: "https://o.example/mcp",
        ARGUMENT_VALIDATON: "enforce",
        "MAX-TOOLS": 40,
        tool_changes: "hold",
        ORIGIN_KEY: "k3y",
        // Unset, as wrangler leaves a var out; the runtime's own; wrangler's own, from a .env; the
        // helpers workers-oauth-provider adds in broker and gate mode.
        UNSET: undefined,
        __VITEST_POOL_WORKERS_SELF_SERVICE: {},
        CLOUDFLARE_API_TOKEN: "t0ken",
        WRANGLER_LOG: "debug",
        OAUTH_PROVIDER: {},
      }),
    );
    const unread = "is not a setting or binding the proxy reads (docs/configuration.md names each)";
    // Marked unread: the name is the operator's, which the Worker's 500 counts and never names.
    expect(result).toEqual({
      kind: "invalid",
      problems: [
        // Told with the setting it is two edits or fewer from, case and `-` for `_` aside.
        {
          setting: "ARGUMENT_VALIDATON",
          path: "ARGUMENT_VALIDATON",
          problem: `${unread}; did you mean ARGUMENT_VALIDATION?`,
          unread: true,
        },
        {
          setting: "MAX-TOOLS",
          path: '["MAX-TOOLS"]',
          problem: `${unread}; did you mean MAX_TOOLS?`,
          unread: true,
        },
        {
          setting: "tool_changes",
          path: "tool_changes",
          problem: `${unread}; did you mean TOOL_CHANGES?`,
          unread: true,
        },
        { setting: "ORIGIN_KEY", path: "ORIGIN_KEY", problem: unread, unread: true },
      ],
    });
  });

  it.each([
    [
      '{"hide": ["a"],\n "tools": {"x": {"name": "y",}}}',
      2,
      30,
      "a member's name in double quotes",
    ],
    ['{"hide": ["a"]\r\n"only": []}', 2, 1, '"," or "}" after a member'],
    ['{"hid":1', 1, 9, '"," or "}" after a member'],
    [
      '{"hide": ["é", \'b\']}',
      1,
      16,
      "a value (an object, array, string, number, true, false or null)",
    ],
    [
      '{"hide": ["a\tb"]}',
      1,
      13,
      "the string's closing \" (a control character such as a line break must be escaped)",
    ],
    [
      '{"hide": ["a\\x"]}',
      1,
      13,
      'an escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\u and four hex digits)',
    ],
    ['{"hide": []} {}', 1, 14, "the end of the text"],
    ["", 1, 1, "a value (an object, array, string, number, true, false or null)"],
  ])("tells where TOOL_RULES' JSON text %j stops being JSON", (text, line, column, expected) => {
    expect(parseConfig(env({ ORIGIN_URL: "https://o.example/mcp", TOOL_RULES: text }))).toEqual(
      refused(
        "TOOL_RULES",
        `is not valid JSON: at line ${line}, column ${column}, expected ${expected}`,
      ),
    );
  });

  it("reads TOOL_RULES as a table or as JSON text, and TOOL_CHANGES", () => {
    const rules = { hide: ["admin.*"], tools: { "a.b": { name: "ab" } } };
    for (const given of [rules, JSON.stringify(rules)]) {
      const result = parseConfig(
        env({ ORIGIN_URL: "https://o.example/mcp", TOOL_RULES: given, TOOL_CHANGES: "hold" }),
      );
      expect(result.kind === "valid" && result.config.policy.changes).toBe("hold");
      expect(result.kind === "valid" && result.config.policy.rules.hides({ name: "admin.x" })).toBe(
        true,
      );
      expect(result.kind === "valid" && [...result.config.policy.rules.names]).toEqual([
        ["a.b", "ab"],
      ]);
    }
    expect(
      parseConfig(env({ ORIGIN_URL: "https://o.example/mcp", TOOL_CHANGES: "block" })),
    ).toEqual(refused("TOOL_CHANGES", "must be one of allow, log, hold"));
  });

  it("refuses TOOL_RULES' JSON text that writes a key twice in one object, as TOML refuses a table that does", () => {
    // JSON.parse keeps the last: the first `hide`, or the first tool's fixed arguments, would be dropped without a word.
    const rulesOf = (text: string) =>
      parseConfig(env({ ORIGIN_URL: "https://o.example/mcp", TOOL_RULES: text }));
    expect(rulesOf('{"hide": ["admin.*"], "only": [], "hide": []}')).toEqual(
      refused("TOOL_RULES", 'writes the key "hide" twice in one object: write each key once'),
    );
    expect(
      rulesOf('{"tools": {"a.b": {"fixed": {"tenant": "acme", "tenant": "globex"}}}}'),
    ).toEqual(
      refused("TOOL_RULES", 'writes the key "tenant" twice in one object: write each key once'),
    );
    // The same key in two objects is two keys; an escape is the key it reads as.
    expect(rulesOf('{"tools": {"a": {"fixed": {"x": 1}}, "b": {"fixed": {"x": 2}}}}').kind).toBe(
      "valid",
    );
    expect(rulesOf('{"hide": ["a"], "\\u0068ide": ["b"]}')).toEqual(
      refused("TOOL_RULES", 'writes the key "hide" twice in one object: write each key once'),
    );
  });

  it("refuses a number in TOOL_RULES that JSON does not keep exactly, as wrangler refuses one in TOML", () => {
    // 12345678901234567890 is read as the double 12345678901234567168: a fixed id would select another record.
    const rounded = refused(
      "TOOL_RULES",
      "holds a number that is not kept exactly (more digits than a double keeps, or past a double's range): the origin would get another; write it as a string if the tool takes one",
    );
    for (const text of [
      '{"tools": {"a.b": {"fixed": {"account": 12345678901234567890}}}}',
      '{"tools": {"a.b": {"defaults": {"limit": 1e400}}}}',
    ]) {
      expect(parseConfig(env({ ORIGIN_URL: "https://o.example/mcp", TOOL_RULES: text }))).toEqual(
        rounded,
      );
    }
    // A TOML float past a double's range, which wrangler reads as Infinity and sends as null.
    expect(
      parseConfig(
        env({
          ORIGIN_URL: "https://o.example/mcp",
          TOOL_RULES: { tools: { "a.b": { fixed: { ratio: Number.POSITIVE_INFINITY } } } },
        }),
      ),
    ).toEqual(rounded);
    const exact = parseConfig(
      env({
        ORIGIN_URL: "https://o.example/mcp",
        // 2^53 is one double exactly, and so is 1e21; 1.50 is 1.5.
        TOOL_RULES:
          '{"tools": {"a.b": {"fixed": {"account": 9007199254740992, "big": 1000000000000000000000, "ratio": 1.50}}}}',
      }),
    );
    expect(exact.kind).toBe("valid");
  });

  it("reads TOOL_CHANGES_SCOPE: the whole definition unless said", () => {
    const scopeOf = (vars: Record<string, string>) => {
      const result = parseConfig(env({ ORIGIN_URL: "https://o.example/mcp", ...vars }));
      return result.kind === "valid" ? result.config.policy.scope : result;
    };
    expect(scopeOf({})).toBe("definition");
    expect(scopeOf({ TOOL_CHANGES_SCOPE: "schema" })).toBe("schema");
    expect(scopeOf({ TOOL_CHANGES_SCOPE: "descriptions" })).toEqual(
      refused("TOOL_CHANGES_SCOPE", "must be one of definition, schema"),
    );
  });

  it("reads a choice with spaces around it, as it reads numbers, paths and URLs", () => {
    const result = parseConfig(
      env({
        ORIGIN_URL: "https://o.example/mcp",
        PROFILE: " gemini ",
        TOOL_CHANGES: "hold\n",
        ARGUMENT_VALIDATION: " enforce",
      }),
    );
    expect(result).toMatchObject({
      kind: "valid",
      config: {
        profile: { name: "gemini" },
        policy: { changes: "hold" },
        argumentValidation: "enforce",
      },
    });
  });

  it("reads TOOL_RULES' and ORIGIN_USER_SECRETS' JSON text from a file with a byte order mark", () => {
    const rules = parseConfig(
      env({
        ORIGIN_URL: "https://o.example/mcp",
        TOOL_RULES: '\ufeff{"hide": ["admin.*"]}',
        // In gate mode, the only one that reads ORIGIN_USER_SECRETS.
        AUTH_MODE: "gate",
        ...SIGN_IN,
        IDP_ISSUER: "https://accounts.google.com",
        IDP_CLIENT_ID: "proxy-client",
        ALLOWED_DOMAINS: "acme.com",
        ORIGIN_USER_SECRETS: '\ufeff{"alice@acme.com": "alice-key"}',
      }),
    );
    expect(rules.kind === "valid" && rules.config.policy.rules.hides({ name: "admin.x" })).toBe(
      true,
    );
    expect(rules.kind === "valid" && rules.config.auth).toMatchObject({
      userSecrets: { kind: "map", map: new Map([["alice@acme.com", "alice-key"]]) },
    });
  });

  it("never quotes a value it refuses, a number or a boolean a TOML var holds among them", () => {
    const result = parseConfig(
      env({
        ORIGIN_URL: "https://o.example/mcp",
        ALLOWED_HOSTS: true,
        UPSTREAM_CLIENT_ID: 86753094211,
        UPSTREAM_CLIENT_SECRET: 31415926535,
        IDP_CLIENT_SECRET: 27182818284,
      }),
    );
    expect(result).toEqual({
      kind: "invalid",
      problems: [
        { setting: "ALLOWED_HOSTS", path: "ALLOWED_HOSTS", problem: "must be text (a string)" },
        {
          setting: "UPSTREAM_CLIENT_ID",
          path: "UPSTREAM_CLIENT_ID",
          problem: "must be text (a string)",
        },
        {
          setting: "UPSTREAM_CLIENT_SECRET",
          path: "UPSTREAM_CLIENT_SECRET",
          problem: "must be text (a string)",
        },
        {
          setting: "IDP_CLIENT_SECRET",
          path: "IDP_CLIENT_SECRET",
          problem: "must be text (a string)",
        },
      ],
    });
    expect(JSON.stringify(result)).not.toMatch(/true|86753094211|31415926535|27182818284/);
  });

  it("reads broker mode, with its bindings and the operator's client at the origin when given", () => {
    const bindings = SIGN_IN;
    const broker = (vars: Record<string, unknown>) =>
      parseConfig(env({ ORIGIN_URL: "https://o.example/mcp", AUTH_MODE: "broker", ...vars }));
    expect(broker(bindings)).toMatchObject({
      kind: "valid",
      config: {
        auth: {
          mode: "broker",
          oauthKv: workerEnv.OAUTH_KV,
          signInRateLimit: workerEnv.SIGN_IN_RATE_LIMIT,
          signInBudget: workerEnv.SIGN_IN_BUDGET,
          signInDailyWrites: 250,
          upstreamClient: undefined,
        },
      },
    });
    expect(broker({ ...bindings, SIGN_IN_DAILY_WRITES: "1000" })).toMatchObject({
      kind: "valid",
      config: { auth: { signInDailyWrites: 1000 } },
    });
    expect(
      broker({ ...bindings, UPSTREAM_CLIENT_ID: "proxy", UPSTREAM_CLIENT_SECRET: "s3cret" }),
    ).toMatchObject({
      kind: "valid",
      config: { auth: { mode: "broker", upstreamClient: { id: "proxy", secret: "s3cret" } } },
    });
    expect(broker({ ...bindings, UPSTREAM_ISSUER: " https://Auth.example.com " })).toMatchObject({
      kind: "valid",
      config: { auth: { upstreamIssuer: new URL("https://auth.example.com/") } },
    });
    expect(broker({ ...bindings, OAUTH_KV: undefined })).toEqual(
      refused("OAUTH_KV", "is required with AUTH_MODE=broker: bind a KV namespace as OAUTH_KV"),
    );
    expect(broker({ ...bindings, SIGN_IN_RATE_LIMIT: undefined })).toEqual(
      refused(
        "SIGN_IN_RATE_LIMIT",
        "is required with AUTH_MODE=broker: add a [[ratelimits]] binding named SIGN_IN_RATE_LIMIT",
      ),
    );
    expect(broker({ ...bindings, SIGN_IN_RATE_LIMIT: "30" })).toEqual(
      refused("SIGN_IN_RATE_LIMIT", "must be a Workers Rate Limiting binding ([[ratelimits]])"),
    );
    expect(broker({ ...bindings, SIGN_IN_BUDGET: undefined })).toEqual(
      refused(
        "SIGN_IN_BUDGET",
        "is required with AUTH_MODE=broker: bind the Durable Object class SignInBudget as SIGN_IN_BUDGET",
      ),
    );
    expect(broker({ ...bindings, SIGN_IN_BUDGET: workerEnv.OAUTH_KV })).toEqual(
      refused("SIGN_IN_BUDGET", "must be a Durable Object binding of the class SignInBudget"),
    );
    expect(broker({ ...bindings, UPSTREAM_CLIENT_SECRET: "s3cret" })).toEqual(
      refused("UPSTREAM_CLIENT_ID", "is required beside UPSTREAM_CLIENT_SECRET"),
    );
  });

  it("reads PROFILE, and NAME_PROFILE, its earlier name, where PROFILE is not set", () => {
    const profileOf_ = (vars: Record<string, unknown>) => {
      const result = parseConfig(env({ ORIGIN_URL: "https://o.example/mcp", ...vars }));
      return result.kind === "valid" && result.config.profile.name;
    };
    expect(profileOf_({ PROFILE: "gemini" })).toBe("gemini");
    expect(profileOf_({ NAME_PROFILE: "portable" })).toBe("portable");
    expect(profileOf_({ PROFILE: "anthropic", NAME_PROFILE: "portable" })).toBe("anthropic");
    expect(profileOf_({})).toBe("openai");
  });

  it("reads PUBLIC_URL as an origin", () => {
    const result = parseConfig(
      env({ ORIGIN_URL: "https://o.example/mcp", PUBLIC_URL: " https://MCP.example.com:8443/ " }),
    );
    expect(result.kind === "valid" && result.config.publicOrigin).toBe(
      "https://mcp.example.com:8443",
    );
  });

  it("refuses a setting of another AUTH_MODE, which would do nothing: gate's left in relay mode, say", () => {
    const otherMode = (modes: string, mode: string) =>
      `is read only with AUTH_MODE=${modes}, and AUTH_MODE is ${mode}: set AUTH_MODE, or remove this`;
    // Gate mode set up, and AUTH_MODE = "gate" left out: relay mode, open to anyone.
    expect(
      parseConfig(
        env({
          ORIGIN_URL: "https://o.example/mcp",
          IDP_ISSUER: "https://accounts.example",
          ALLOWED_DOMAINS: "acme.com",
          ORIGIN_SECRET: "sk-never-shown",
          PASS_HEADERS: "x-tenant",
        }),
      ),
    ).toEqual({
      kind: "invalid",
      problems: [
        {
          setting: "PASS_HEADERS",
          path: "PASS_HEADERS",
          problem: otherMode("broker or gate", "relay"),
        },
        { setting: "IDP_ISSUER", path: "IDP_ISSUER", problem: otherMode("gate", "relay") },
        {
          setting: "ALLOWED_DOMAINS",
          path: "ALLOWED_DOMAINS",
          problem: otherMode("gate", "relay"),
        },
        { setting: "ORIGIN_SECRET", path: "ORIGIN_SECRET", problem: otherMode("gate", "relay") },
      ],
    });
    expect(
      parseConfig(
        env({
          ORIGIN_URL: "https://o.example/mcp",
          AUTH_MODE: "broker",
          ...SIGN_IN,
          UPSTREAM_ISSUER: "https://auth.example",
          IDP_CLIENT_ID: "app",
        }),
      ),
    ).toEqual(refused("IDP_CLIENT_ID", otherMode("gate", "broker")));
    // Told once, by its own problem, when it is wrong in itself.
    expect(parseConfig(env({ ORIGIN_URL: "https://o.example/mcp", IDP_ISSUER: "idp" }))).toEqual(
      refused("IDP_ISSUER", "must be an absolute http:// or https:// URL"),
    );
  });

  it("refuses sign-in's budget and bindings in relay mode, where nothing reads them, all at once", () => {
    const relayOnly = (setting: string) => ({
      setting,
      path: setting,
      problem:
        "is read only with AUTH_MODE=broker or gate, and AUTH_MODE is relay: set AUTH_MODE, or remove this",
    });
    // A broker tenant's section with AUTH_MODE = "broker" left out: a relay, its sign-in unused.
    const relay = parseConfig(
      env({ ORIGIN_URL: "https://o.example/mcp", SIGN_IN_DAILY_WRITES: "4321", ...SIGN_IN }),
    );
    expect(relay).toEqual({
      kind: "invalid",
      problems: ["SIGN_IN_DAILY_WRITES", "OAUTH_KV", "SIGN_IN_RATE_LIMIT", "SIGN_IN_BUDGET"].map(
        relayOnly,
      ),
    });
    expect(JSON.stringify(relay)).not.toContain("4321");
    // Each on its own, as AUTH_MODE = "relay" written out.
    expect(
      parseConfig(
        env({
          ORIGIN_URL: "https://o.example/mcp",
          AUTH_MODE: "relay",
          OAUTH_KV: SIGN_IN.OAUTH_KV,
        }),
      ),
    ).toEqual({ kind: "invalid", problems: [relayOnly("OAUTH_KV")] });
    // Told once, by its own problem, when it is wrong in itself.
    expect(
      parseConfig(env({ ORIGIN_URL: "https://o.example/mcp", SIGN_IN_DAILY_WRITES: "2" })),
    ).toEqual(refused("SIGN_IN_DAILY_WRITES", "must be at least 3 writes"));
    expect(
      parseConfig(
        env({ ORIGIN_URL: "https://o.example/mcp", OAUTH_KV: SIGN_IN.SIGN_IN_RATE_LIMIT }),
      ),
    ).toEqual(refused("OAUTH_KV", "must be a KV namespace binding ([[kv_namespaces]])"));
    // Read in broker and gate mode.
    expect(
      parseConfig(
        env({
          ORIGIN_URL: "https://o.example/mcp",
          AUTH_MODE: "broker",
          SIGN_IN_DAILY_WRITES: "4321",
          ...SIGN_IN,
        }),
      ).kind,
    ).toBe("valid");
  });

  it("refuses a URL with a user name or password, and an ORIGIN_URL with a fragment, never quoting it", () => {
    const credentials = "must hold no user name or password (user:pass@ before the host)";
    const result = parseConfig(
      env({
        ORIGIN_URL: "https://ann:pa55word@o.example/mcp",
        PUBLIC_URL: "https://ann:pa55word@mcp.example.com",
        UPSTREAM_ISSUER: "https://ann@auth.example",
        IDP_ISSUER: "https://:pa55word@accounts.example",
      }),
    );
    expect(result).toEqual({
      kind: "invalid",
      problems: ["ORIGIN_URL", "PUBLIC_URL", "UPSTREAM_ISSUER", "IDP_ISSUER"].map((setting) => ({
        setting,
        path: setting,
        problem: credentials,
      })),
    });
    // A fragment is never sent: what follows # would be dropped without a word.
    expect(parseConfig(env({ ORIGIN_URL: "https://o.example/mcp#key=pa55word" }))).toEqual(
      refused("ORIGIN_URL", "must hold no #fragment: a fragment is never sent to the origin"),
    );
  });

  it("reads ALLOWED_HOSTS as a list of lower-case hosts, each with a port where it names one", () => {
    const result = parseConfig(
      env({
        ORIGIN_URL: "https://o.example/mcp",
        ALLOWED_HOSTS: " LocalHost, 127.0.0.1,,[::1],localhost:6274 ",
      }),
    );
    expect(result.kind === "valid" && result.config.allowedHosts).toEqual([
      { hostname: "localhost" },
      { hostname: "127.0.0.1" },
      { hostname: "[::1]" },
      { hostname: "localhost", port: "6274" },
    ]);
    expect(
      parseConfig(env({ ORIGIN_URL: "https://o.example/mcp", ALLOWED_HOSTS: "http://x" })),
    ).toEqual(
      refused("ALLOWED_HOSTS", "must be hostnames or host:port pairs, separated by commas"),
    );
  });

  it("refuses an ALLOWED_HOSTS entry no request's host reads as, by its place, not its text", () => {
    // A request's host is read as a URL reads it: 127.1 is 127.0.0.1, a port has no leading zero.
    for (const value of [
      "localhost,127.1",
      "localhost,0x7f.0.0.1",
      "localhost,localhost:080",
      "localhost,localhost:99999",
    ]) {
      expect(
        parseConfig(env({ ORIGIN_URL: "https://o.example/mcp", ALLOWED_HOSTS: value })),
        value,
      ).toEqual(
        refused(
          "ALLOWED_HOSTS",
          "has an entry (number 2) that no request's host reads as: write a host as a URL reads it (127.0.0.1, not 127.1), and a port from 1 to 65535 without leading zeros",
        ),
      );
    }
  });

  it("refuses an ALLOWED_HOSTS that is written and lists no host: only unset or empty means any host", () => {
    // A typo must not turn the host check off.
    for (const value of [",", " , ", "  "]) {
      expect(
        parseConfig(env({ ORIGIN_URL: "https://o.example/mcp", ALLOWED_HOSTS: value })),
        value,
      ).toEqual(
        refused("ALLOWED_HOSTS", "lists no host: leave it unset, or empty, to answer any host"),
      );
    }
    const empty = parseConfig(env({ ORIGIN_URL: "https://o.example/mcp", ALLOWED_HOSTS: "" }));
    expect(empty.kind === "valid" && empty.config.allowedHosts).toEqual([]);
  });

  it("reads PASS_HEADERS as lower-case header names, for broker mode", () => {
    const result = parseConfig(
      env({
        ORIGIN_URL: "https://o.example/mcp",
        AUTH_MODE: "broker",
        ...SIGN_IN,
        PASS_HEADERS: " X-Tenant,,traceparent , CF-Access-Client-Id",
      }),
    );
    expect(result.kind === "valid" && result.config.auth).toMatchObject({
      passHeaders: new Set(["x-tenant", "traceparent", "cf-access-client-id"]),
    });
  });

  it.each([
    ["X-Tenant, x tenant", "is not a header name (letters, digits and !#$%&'*+-.^_`|~)", 2],
    ["x-tenant,x-café", "is not a header name (letters, digits and !#$%&'*+-.^_`|~)", 2],
    [`x-${"a".repeat(63)}`, "is longer than 64 characters", 1],
    ["Authorization", "carries the origin's token, which the proxy sets itself", 1],
    ["x-tenant, Cookie", "carries cookies of the proxy's host, which never reach the origin", 2],
    [
      "Proxy-Authorization",
      "is hop-by-hop: it describes the client's connection, not its request",
      1,
    ],
    ["host", "is set by the runtime on the proxy's own request", 1],
    ["X-Forwarded-For", "says where the client is, which any client could forge", 1],
    ["x-tenant, True-Client-IP", "says where the client is, which any client could forge", 2],
    ["X-HTTP-Method-Override", "overrides the request's URL, method or host", 1],
    ["CF-IPCountry", "is Cloudflare's (cf-*), which any client could forge", 1],
    [
      "x-tenant, X_Forwarded_For",
      "is, with - for _, a header of HTTP's, MCP's, Cloudflare's or a credential, which servers that read _ as - take it for",
      2,
    ],
  ])("refuses PASS_HEADERS = %o by the entry's place, never its text", (value, why, entry) => {
    const result = parseConfig(env({ ORIGIN_URL: "https://o.example/mcp", PASS_HEADERS: value }));
    expect(result).toEqual(refused("PASS_HEADERS", `has an entry (number ${entry}) that ${why}`));
  });

  it("bounds PASS_HEADERS: at most 32 names", () => {
    const names = (count: number) => Array.from({ length: count }, (_, i) => `x-h${i}`).join(",");
    const broker = (passHeaders: string) =>
      parseConfig(
        env({
          ORIGIN_URL: "https://o.example/mcp",
          AUTH_MODE: "broker",
          ...SIGN_IN,
          PASS_HEADERS: passHeaders,
        }),
      );
    expect(broker(names(32)).kind).toBe("valid");
    expect(broker(names(33))).toEqual(refused("PASS_HEADERS", "must list at most 32 header names"));
    expect(broker("x".repeat(10_000))).toEqual(
      refused("PASS_HEADERS", "must list at most 32 header names of at most 64 characters"),
    );
  });

  it.each([
    ["ORIGIN_TIMEOUT_MS", "1.5", "must be a whole number of milliseconds"],
    ["ORIGIN_TIMEOUT_MS", "-3", "must be at least 1 millisecond"],
    ["MAX_BODY_BYTES", "", "must be a whole number of bytes"],
    ["MAX_BODY_BYTES", " ", "must be a whole number of bytes"],
    ["MAX_BODY_BYTES", true, "must be a whole number of bytes"],
    ["MAX_BATCH_MESSAGES", "0", "must be at least 1 message"],
    ["MAX_BATCH_MESSAGES", "257", "must be at most 256 messages"],
    ["MAX_BATCH_MESSAGES", "many", "must be a whole number of messages"],
    ["MAX_LOCAL_ANSWER_BYTES", "65536", "must be at least 131072 bytes"],
    ["MAX_LOCAL_ANSWER_BYTES", "16777217", "must be at most 16777216 bytes"],
    [
      "NAME_PROFILE",
      "claude",
      "must be one of openai, openai-strict, anthropic, bedrock, gemini, portable, mcp",
    ],
    [
      "PROFILE",
      "claude",
      "must be one of openai, openai-strict, anthropic, bedrock, gemini, portable, mcp",
    ],
    ["NAME_MAX_LENGTH", "11", "must be at least 12 characters"],
    ["MAX_TOOLS", "1", "must be at least 2 tools"],
    ["MAX_TOOLS", "forty", "must be a whole number of tools"],
    // Number() reads these as 16, 100 and 1: a count or share is written in decimal digits.
    ["MAX_TOOLS", "0x10", "must be a whole number of tools"],
    ["MAX_TOOLS", "1e2", "must be a whole number of tools"],
    ["CALLS_ANSWER_SAMPLING_RATE", "0x1", "must be 0, or a number from 0.0001 to 1"],
    ["ARGUMENT_VALIDATION", "strict", "must be one of off, warn, enforce"],
    ["MCP_PATH", "mcp", "must start with /"],
    ["AUTH_MODE", "proxy", "must be one of relay, broker, gate"],
    ["SIGN_IN_DAILY_WRITES", "2", "must be at least 3 writes"],
    ["SIGN_IN_DAILY_WRITES", "a lot", "must be a whole number of writes"],
    ["CALLS_ANSWER_SAMPLING_RATE", "1.5", "must be 0, or a number from 0.0001 to 1"],
    ["CALLS_ANSWER_SAMPLING_RATE", "-0.1", "must be 0, or a number from 0.0001 to 1"],
    ["CALLS_ANSWER_SAMPLING_RATE", "half", "must be 0, or a number from 0.0001 to 1"],
    ["CALLS_ANSWER_SAMPLING_RATE", "", "must be 0, or a number from 0.0001 to 1"],
    // A point read stands for 1 ÷ the rate calls: a rate near 0 would make that infinite.
    ["CALLS_ANSWER_SAMPLING_RATE", "5e-324", "must be 0, or a number from 0.0001 to 1"],
    ["PUBLIC_URL", "mcp.example.com", "must be an absolute http:// or https:// URL"],
    [
      "PUBLIC_URL",
      "https://mcp.example.com/mcp",
      "must be the proxy's public origin only, like https://mcp.example.com (no path)",
    ],
    ["UPSTREAM_ISSUER", "auth.example.com", "must be an absolute http:// or https:// URL"],
    [
      "UPSTREAM_ISSUER",
      "https://auth.example.com/?tenant=acme",
      "must be the authorization server's issuer, like https://auth.example.com (no query or fragment)",
    ],
    ["ORIGIN_URL", "ftp://o.example/mcp", "must be an absolute http:// or https:// URL"],
    ["ORIGIN_URL", "/mcp", "must be an absolute http:// or https:// URL"],
    ["ORIGIN_URL", undefined, "is missing; set it to the full URL of the origin's MCP endpoint"],
    ["ORIGIN_URL", 5, "must be a URL in quotes, not a number or a table"],
    ["UPSTREAM_ISSUER", true, "must be a URL in quotes, not a number or a table"],
  ])("refuses %s = %o: it %s", (setting, value, problem) => {
    expect(parseConfig(env({ ORIGIN_URL: "https://o.example/mcp", [setting]: value }))).toEqual(
      refused(setting, problem),
    );
  });
});

describe("parseConfig, gate mode", () => {
  const bindings = SIGN_IN;
  const minimal = {
    ...bindings,
    IDP_ISSUER: "https://accounts.google.com",
    IDP_CLIENT_ID: "proxy-client",
    IDP_CLIENT_SECRET: "client-s3cret",
    ALLOWED_DOMAINS: "acme.com",
    ORIGIN_SECRET: "sk-live-key",
  };
  const gate = (vars: Record<string, unknown>) =>
    parseConfig(env({ ORIGIN_URL: "https://o.example/mcp", AUTH_MODE: "gate", ...vars }));

  it("reads the identity provider, who may connect, and the origin's key, with the documented defaults", () => {
    expect(
      gate({
        ...minimal,
        ALLOWED_USERS: " Alice@Acme.com ,bob@other.org",
        ALLOWED_GROUPS: "MCP Users, admins",
      }),
    ).toMatchObject({
      kind: "valid",
      config: {
        auth: {
          mode: "gate",
          oauthKv: workerEnv.OAUTH_KV,
          signInDailyWrites: 250,
          idp: {
            protocol: "oidc",
            issuer: new URL("https://accounts.google.com"),
            clientId: "proxy-client",
            clientSecret: "client-s3cret",
            groupsClaim: "groups",
          },
          allowed: {
            users: new Set(["alice@acme.com", "bob@other.org"]),
            domains: new Set(["acme.com"]),
            groups: new Set(["MCP Users", "admins"]),
            orgs: new Set(),
          },
          originAuth: { header: "authorization", prefix: "Bearer ", suffix: "" },
          originSecret: { kind: "text", text: "sk-live-key" },
          userSecrets: undefined,
          userHeader: undefined,
          signInMaxAgeS: 24 * 3600,
        },
      },
    });
  });

  it("takes a Secrets Store secret bound as wrangler dev binds it: an RPC stub, which answers any method's name", () => {
    // Miniflare binds a Secrets Store secret as a service of its SecretsStoreSecret entrypoint.
    // The runtime's own service binding is such a stub: `list`, `create`, any name is a method.
    const stub = (workerEnv as unknown as Record<string, unknown>)
      .__VITEST_POOL_WORKERS_SELF_SERVICE;
    expect(typeof (stub as Record<string, unknown>).list).toBe("function");
    expect(gate({ ...minimal, ORIGIN_SECRET: stub })).toMatchObject({
      kind: "valid",
      config: { auth: { originSecret: { kind: "store", store: stub } } },
    });
    // Nor is it taken for a KV namespace of users' keys: its get() would answer the one secret,
    // whatever user it is asked for.
    expect(gate({ ...minimal, ORIGIN_USER_SECRETS: stub })).toEqual(
      refused(
        "ORIGIN_USER_SECRETS",
        "must be a KV namespace binding (a Secrets Store secret is one key, not one per user), or a Worker secret holding a JSON object of emails and keys",
      ),
    );
  });

  it("reads a header and value of the origin's own, a Secrets Store key, per-user keys and the user header", async () => {
    const store = { get: async () => "from-store" };
    const result = gate({
      ...minimal,
      ORIGIN_AUTH_HEADER: "X-API-Key",
      ORIGIN_AUTH_VALUE: "key={secret};v=1",
      ORIGIN_SECRET: store,
      ORIGIN_USER_SECRETS: JSON.stringify({ " Alice@Acme.com ": "alice-key" }),
      ORIGIN_USER_HEADER: "X-User-Email",
      SIGN_IN_MAX_AGE_HOURS: "168",
    });
    expect(result).toMatchObject({
      kind: "valid",
      config: {
        auth: {
          originAuth: { header: "x-api-key", prefix: "key=", suffix: ";v=1" },
          originSecret: { kind: "store", store },
          userSecrets: { kind: "map", map: new Map([["alice@acme.com", "alice-key"]]) },
          userHeader: "x-user-email",
          signInMaxAgeS: 168 * 3600,
        },
      },
    });
    expect(gate({ ...minimal, ORIGIN_USER_SECRETS: workerEnv.OAUTH_KV })).toMatchObject({
      kind: "valid",
      config: { auth: { userSecrets: { kind: "kv", kv: workerEnv.OAUTH_KV } } },
    });
  });

  it("refuses ORIGIN_USER_SECRETS naming one email twice, in any case, without saying which", () => {
    // JSON.parse keeps the last of two keys, and emails are compared in any case: one key would be
    // dropped without a word.
    for (const text of [
      '{"alice@acme.com":"key-1","alice@acme.com":"key-2"}',
      '{"alice@acme.com":"key-1","Alice@Acme.com":"key-2"}',
    ]) {
      const result = gate({ ...minimal, ORIGIN_USER_SECRETS: text });
      expect(result, text).toEqual(
        refused(
          "ORIGIN_USER_SECRETS",
          "names one email address twice (in any case): write each once",
        ),
      );
      expect(JSON.stringify(result)).not.toContain("key-");
      expect(JSON.stringify(result).toLowerCase()).not.toContain("alice");
    }
  });

  it("reads GitHub, at github.com unless IDP_ISSUER names an Enterprise Server", () => {
    const github = { ...minimal, IDP_ISSUER: undefined, ALLOWED_DOMAINS: undefined };
    expect(gate({ ...github, IDP_PROTOCOL: "github", ALLOWED_ORGS: "Acme-Corp" })).toMatchObject({
      kind: "valid",
      config: {
        auth: {
          idp: { protocol: "github", issuer: new URL("https://github.com") },
          allowed: { orgs: new Set(["acme-corp"]) },
        },
      },
    });
  });

  it("fails closed: with no ALLOWED_* list, no one could sign in, and that is a startup error", () => {
    const none = refused(
      "ALLOWED_USERS",
      "is required with AUTH_MODE=gate, or ALLOWED_DOMAINS, ALLOWED_GROUPS or ALLOWED_ORGS: with none, no one may sign in",
    );
    expect(gate({ ...minimal, ALLOWED_DOMAINS: undefined })).toEqual(none);
    expect(gate({ ...minimal, ALLOWED_DOMAINS: " , " })).toEqual(none);
  });

  it("tells every problem at once: one gate setting's own problem hides no check across the others", () => {
    const paths = (vars: Record<string, unknown>) => {
      const result = gate({ ...minimal, ...vars });
      return result.kind === "invalid" ? result.problems.map(({ path }) => path) : [];
    };
    // Each pair: a setting wrong in itself, and what a check across settings finds beside it.
    expect(paths({ SIGN_IN_MAX_AGE_HOURS: "0", IDP_ISSUER: undefined })).toEqual([
      "SIGN_IN_MAX_AGE_HOURS",
      "IDP_ISSUER",
    ]);
    expect(paths({ ORIGIN_USER_SECRETS: "{ not json", ALLOWED_DOMAINS: undefined })).toEqual([
      "ORIGIN_USER_SECRETS",
      "ALLOWED_USERS",
    ]);
    expect(paths({ PASS_HEADERS: 42, IDP_CLIENT_ID: undefined })).toEqual([
      "PASS_HEADERS",
      "IDP_CLIENT_ID",
    ]);
    // A check that reads a setting wrong in itself is left until it is right: nothing told twice.
    expect(paths({ ORIGIN_USER_SECRETS: "{ not json", ORIGIN_SECRET: undefined })).toEqual([
      "ORIGIN_USER_SECRETS",
    ]);
    expect(paths({ ALLOWED_ORGS: "-", ALLOWED_DOMAINS: undefined })).toEqual(["ALLOWED_ORGS"]);
  });

  it.each([
    [
      { IDP_ISSUER: undefined },
      "IDP_ISSUER",
      "is required with AUTH_MODE=gate: your identity provider's issuer URL, like https://accounts.google.com",
    ],
    [
      { IDP_CLIENT_ID: undefined },
      "IDP_CLIENT_ID",
      "is required with AUTH_MODE=gate: the client ID of the proxy's app at your identity provider",
    ],
    [
      { IDP_ISSUER: "http://idp.example" },
      "IDP_ISSUER",
      "must be an https:// URL (http:// only on localhost)",
    ],
    [
      { IDP_ISSUER: "https://idp.example/?tenant=1" },
      "IDP_ISSUER",
      "must be the identity provider's issuer, like https://accounts.google.com (no query or fragment)",
    ],
    [{ IDP_PROTOCOL: "saml" }, "IDP_PROTOCOL", "must be one of oidc, github"],
    [
      { IDP_PROTOCOL: "github", IDP_ISSUER: undefined, IDP_CLIENT_SECRET: undefined },
      "IDP_CLIENT_SECRET",
      "is required with IDP_PROTOCOL=github",
    ],
    [{ ALLOWED_ORGS: "acme" }, "ALLOWED_ORGS", "needs IDP_PROTOCOL=github"],
    [
      { IDP_PROTOCOL: "github", ALLOWED_GROUPS: "admins" },
      "ALLOWED_GROUPS",
      "is for OpenID Connect: with GitHub, use ALLOWED_ORGS",
    ],
    [
      { ALLOWED_USERS: "alice@acme.com, not an email" },
      "ALLOWED_USERS",
      "has an entry (number 2) that is not an email address",
    ],
    [
      { ALLOWED_DOMAINS: "@acme.com" },
      "ALLOWED_DOMAINS",
      "has an entry (number 1) that is not a domain name, like acme.com",
    ],
    [
      { ORIGIN_SECRET: undefined },
      "ORIGIN_SECRET",
      "is required with AUTH_MODE=gate (or ORIGIN_USER_SECRETS): the origin's key, as a Worker secret or a Secrets Store binding",
    ],
    [
      { ORIGIN_SECRET: "sk-live\nkey" },
      "ORIGIN_SECRET",
      "must be printable ASCII (no line breaks), at most 4096 characters",
    ],
    [{ ORIGIN_SECRET: 42 }, "ORIGIN_SECRET", "must be a Worker secret or a Secrets Store binding"],
    // Bindings with a get() of their own, which takes a key: every request would fail with 503.
    [
      { ORIGIN_SECRET: workerEnv.OAUTH_KV },
      "ORIGIN_SECRET",
      "must be a Worker secret or a Secrets Store binding",
    ],
    [
      { ORIGIN_SECRET: workerEnv.SIGN_IN_BUDGET },
      "ORIGIN_SECRET",
      "must be a Worker secret or a Secrets Store binding",
    ],
    [
      { ORIGIN_USER_SECRETS: workerEnv.SIGN_IN_BUDGET },
      "ORIGIN_USER_SECRETS",
      "must be a KV namespace binding, or a Worker secret holding a JSON object of emails and keys",
    ],
    [
      { ORIGIN_AUTH_VALUE: "Bearer sk-live-key" },
      "ORIGIN_AUTH_VALUE",
      'must hold {secret} once, where the proxy puts ORIGIN_SECRET, like "Bearer {secret}"',
    ],
    [
      { ORIGIN_AUTH_HEADER: "X-Forwarded-For" },
      "ORIGIN_AUTH_HEADER",
      "must be a header of the origin's own, not one of HTTP's, MCP's, Cloudflare's or the client's",
    ],
    [
      { ORIGIN_USER_HEADER: "Authorization" },
      "ORIGIN_USER_HEADER",
      "must be a header of the origin's own, not one of HTTP's, MCP's, Cloudflare's or the client's",
    ],
    [
      { ORIGIN_AUTH_HEADER: "X-Key", ORIGIN_USER_HEADER: "x-key" },
      "ORIGIN_USER_HEADER",
      "must not be ORIGIN_AUTH_HEADER",
    ],
    [
      // A Secrets Store secret's get() takes no key: every user would get the whole secret as theirs.
      { ORIGIN_USER_SECRETS: { get: async () => '{"alice@acme.com":"alice-key"}' } },
      "ORIGIN_USER_SECRETS",
      "must be a KV namespace binding (a Secrets Store secret is one key, not one per user), or a Worker secret holding a JSON object of emails and keys",
    ],
    [
      { ORIGIN_USER_SECRETS: "{ not json" },
      "ORIGIN_USER_SECRETS",
      "must be JSON text: an object of emails and keys",
    ],
    [
      { ORIGIN_USER_SECRETS: JSON.stringify({ "alice@acme.com": "k", bob: "k2" }) },
      "ORIGIN_USER_SECRETS",
      "has an entry (number 2) that is not an email address",
    ],
    [
      { ORIGIN_USER_SECRETS: JSON.stringify({ "alice@acme.com": "line\nbreak" }) },
      "ORIGIN_USER_SECRETS",
      "has an entry (number 1) whose key is not printable ASCII text",
    ],
    [
      { PASS_HEADERS: "x-tenant, cf-access-client-secret" },
      "PASS_HEADERS",
      "has an entry (number 2) that carries a credential, which gate mode never passes on",
    ],
    [
      { PASS_HEADERS: "x-tenant, api-key" },
      "PASS_HEADERS",
      "has an entry (number 2) that carries a credential, which gate mode never passes on",
    ],
    [
      { ORIGIN_AUTH_HEADER: "X-API-Key", PASS_HEADERS: "X-API-Key" },
      "PASS_HEADERS",
      "has an entry (number 1) that carries a credential, which gate mode never passes on",
    ],
    [
      // Read as the proxy's X-User-Email by a server that takes `_` for `-` (CGI's HTTP_X_USER_EMAIL).
      { ORIGIN_USER_HEADER: "X-User-Email", PASS_HEADERS: "x-tenant, X_User_Email" },
      "PASS_HEADERS",
      "has an entry (number 2) that carries a credential, which gate mode never passes on",
    ],
    [
      { ORIGIN_AUTH_HEADER: "X-Origin-Key", PASS_HEADERS: "x_origin_key" },
      "PASS_HEADERS",
      "has an entry (number 1) that carries a credential, which gate mode never passes on",
    ],
    [
      { ORIGIN_AUTH_HEADER: "X-Key", ORIGIN_USER_HEADER: "x_key" },
      "ORIGIN_USER_HEADER",
      "must not be ORIGIN_AUTH_HEADER",
    ],
    [{ SIGN_IN_MAX_AGE_HOURS: "0" }, "SIGN_IN_MAX_AGE_HOURS", "must be at least 1 hour"],
    [
      { OAUTH_KV: undefined },
      "OAUTH_KV",
      "is required with AUTH_MODE=gate: bind a KV namespace as OAUTH_KV",
    ],
  ])("refuses %o by the setting's name, never its value", (vars, setting, problem) => {
    const result = gate({ ...minimal, ...vars });
    expect(result).toEqual(refused(setting, problem));
    expect(JSON.stringify(result)).not.toMatch(/s3cret|sk-live|line\\nbreak|alice-key/);
  });
});

describe("parseConfig, any settings (property)", () => {
  const SETTINGS = [
    "ORIGIN_URL",
    "MCP_PATH",
    "ORIGIN_TIMEOUT_MS",
    "MAX_BODY_BYTES",
    "MAX_BATCH_MESSAGES",
    "MAX_LOCAL_ANSWER_BYTES",
    "PROFILE",
    "NAME_PROFILE",
    "NAME_MAX_LENGTH",
    "MAX_TOOLS",
    "TOOL_RULES",
    "TOOL_CHANGES",
    "TOOL_CHANGES_SCOPE",
    "ARGUMENT_VALIDATION",
    "CALLS_ANSWER_SAMPLING_RATE",
    "ALLOWED_HOSTS",
    "PUBLIC_URL",
    "AUTH_MODE",
    "SIGN_IN_DAILY_WRITES",
    "UPSTREAM_ISSUER",
    "UPSTREAM_CLIENT_ID",
    "UPSTREAM_CLIENT_SECRET",
    "PASS_HEADERS",
    "IDP_PROTOCOL",
    "IDP_ISSUER",
    "IDP_CLIENT_ID",
    "IDP_CLIENT_SECRET",
    "IDP_GROUPS_CLAIM",
    "ALLOWED_USERS",
    "ALLOWED_DOMAINS",
    "ALLOWED_GROUPS",
    "ALLOWED_ORGS",
    "ORIGIN_AUTH_HEADER",
    "ORIGIN_AUTH_VALUE",
    "ORIGIN_SECRET",
    "ORIGIN_USER_SECRETS",
    "ORIGIN_USER_HEADER",
    "SIGN_IN_MAX_AGE_HOURS",
  ] as const;
  // What an operator may write: TOML values, or text (JSON text among it), near-misses of real values.
  const rulesLike = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: "small" },
      fc.constantFrom("*", "files.*", "[", "admin.*", "", "__proto__", "name", "a_b"),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(tie("value"), { maxLength: 3 }),
      fc.dictionary(
        fc.constantFrom(
          "hide",
          "only",
          "hideAnnotated",
          "onlyAnnotated",
          "tools",
          "files.read",
          "name",
          "description",
          "aliases",
          "fixed",
          "defaults",
          "destructiveHint",
          "__proto__",
          "constructor",
        ),
        tie("value"),
        { maxKeys: 4 },
      ),
    ),
  })).value;
  const value = fc.oneof(
    fc.string({ maxLength: 20 }),
    fc.constantFrom(
      "https://o.example/mcp",
      "/mcp",
      "1000",
      "0",
      "-1",
      "openai",
      "hold",
      "broker",
      "gate",
      "github",
      "a@b.example",
      "b.example",
      "Bearer {secret}",
    ),
    fc.integer(),
    rulesLike,
    rulesLike.map((rules) => JSON.stringify(rules)),
  );
  const settings = fc.dictionary(fc.constantFrom(...SETTINGS), value, { maxKeys: 6 });

  it("never throws, and a refusal names a setting it was given (or one that is missing)", () => {
    let refused = 0;
    fc.assert(
      fc.property(settings, fc.boolean(), (vars, withOrigin) => {
        const given = { ...(withOrigin ? { ORIGIN_URL: "https://o.example/mcp" } : {}), ...vars };
        const result = parseConfig(env(given));
        if (result.kind === "valid") return;
        refused++;
        const required = [
          ...[
            "ORIGIN_URL",
            "OAUTH_KV",
            "SIGN_IN_RATE_LIMIT",
            "SIGN_IN_BUDGET",
            "UPSTREAM_CLIENT_ID",
          ],
          // Gate mode's, named when missing (ALLOWED_USERS for every list).
          ...["IDP_ISSUER", "IDP_CLIENT_ID", "IDP_CLIENT_SECRET", "ALLOWED_USERS", "ORIGIN_SECRET"],
        ];
        expect(result.problems.length).toBeGreaterThan(0);
        for (const { setting, path, problem } of result.problems) {
          expect([...Object.keys(given), ...required]).toContain(setting);
          expect(path.startsWith(setting)).toBe(true);
          expect(problem).not.toBe("");
        }
      }),
      { numRuns: 2000 },
    );
    // Not vacuous: most settings are refused (1,820 to 1,863 of 2,000 across 60 seeds, a standard
    // deviation of 10), never fewer than half as many.
    expect(refused).toBeGreaterThan(900);
  });
});
