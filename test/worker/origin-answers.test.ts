/**
 * Whatever the origin answers a `tools/list` with, the proxy answers the
 * client: renamed, passed on as it came, or refused (`502`), never its own
 * throw (the app's 500). The origin is untrusted input, as the client is
 * (test/worker/malformed-requests.test.ts): random tools, schemas,
 * annotations, ids and shapes, in a JSON body and in an event stream
 * (resumed too), under every profile and under rules that hide, hold and
 * rewrite.
 */
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isPlainObject, parseJson } from "../../src/json";
import type { ProfileName } from "../../src/names/profiles";
import { unreadAddressee } from "../../src/protocol/jsonrpc";
import { namedTools } from "../../src/protocol/tools-list";
import { rewriteResponse } from "../../src/rewrite/response";
import { NO_POLICY, type ToolPolicy } from "../../src/rules/tool-rules";
import { profileOf } from "../../src/schemas/profile";
import { ToolMapMemory, toolMapScopes } from "../../src/toolmap/isolate-memory";
import { ToolMap } from "../../src/toolmap/tool-map";
import { ReadBudget } from "../../src/transport/read-bounded";
import { messagesOf } from "../helpers/mcp";
import { rulesOf } from "../helpers/tool-rules";

const RULES = rulesOf({
  hide: ["secret.*"],
  hideAnnotated: { destructiveHint: true },
  tools: { "files.read": { name: "read_file", appendDescription: "Paths are relative." } },
});
const POLICIES: ToolPolicy[] = [
  NO_POLICY,
  { rules: RULES, changes: "log" },
  { rules: RULES, changes: "hold" },
];
const PROFILES: ProfileName[] = ["openai", "openai-strict", "gemini", "anthropic", "portable"];

/**
 * A value nested deeper than the proxy reads (512 levels), and than a stack:
 * a mark in the generated value, written out in the answer's text (so that
 * neither fast-check nor the test recurses into it).
 */
const DEEP = /"deep:(\d+)"/g;
const nested = fc.integer({ min: 500, max: 20_000 }).map((levels) => `deep:${levels}`);
const textOf = (payload: unknown) =>
  JSON.stringify(payload).replace(
    DEEP,
    (_, levels) => `${"[".repeat(levels)}1${"]".repeat(levels)}`,
  );

/** Schemas as origins write them, and as they should not: any JSON, keywords of any type. */
const schema = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  // Rarely: one makes the page it is on unreadable.
  { weight: 1, arbitrary: nested },
  {
    weight: 6,
    arbitrary: fc.record(
      {
        type: fc.oneof(fc.constantFrom("object", "string", "array", "integer"), fc.jsonValue()),
        properties: fc.dictionary(
          fc.oneof(fc.constantFrom("a", "b-c", "__proto__", "$ref"), fc.string({ maxLength: 6 })),
          fc.oneof(
            fc.record({ type: fc.constantFrom("string", "number", "object", "null") }),
            fc.record({ $ref: fc.constantFrom("#", "#/properties/a", "#/$defs/x", "x") }),
            fc.record({ anyOf: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }) }),
            fc.jsonValue({ maxDepth: 3 }),
          ),
          { maxKeys: 5 },
        ),
        required: fc.oneof(fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }), fc.jsonValue()),
        $defs: fc.dictionary(fc.string({ maxLength: 3 }), fc.jsonValue({ maxDepth: 3 })),
        additionalProperties: fc.oneof(fc.boolean(), fc.jsonValue({ maxDepth: 2 })),
      },
      { requiredKeys: [] },
    ),
  },
);
const tool = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record(
      {
        name: fc.oneof(
          fc.constantFrom("files.read", "secret.admin", "a/b", "a_b", "", "__proto__"),
          fc.string({ maxLength: 70 }),
          fc.jsonValue({ maxDepth: 1 }),
        ),
        title: fc.oneof(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 1 })),
        description: fc.oneof(fc.string({ maxLength: 30 }), fc.jsonValue({ maxDepth: 1 })),
        inputSchema: schema,
        outputSchema: schema,
        annotations: fc.oneof(
          fc.record(
            {
              destructiveHint: fc.jsonValue({ maxDepth: 0 }),
              title: fc.jsonValue({ maxDepth: 1 }),
            },
            { requiredKeys: [] },
          ),
          fc.jsonValue({ maxDepth: 2 }),
        ),
        _meta: fc.jsonValue({ maxDepth: 2 }),
      },
      { requiredKeys: ["name"] },
    ),
  },
  fc.jsonValue({ maxDepth: 2 }),
);
const answer = fc.record(
  {
    jsonrpc: fc.oneof({ weight: 9, arbitrary: fc.constant("2.0") }, fc.constant("1.0")),
    id: fc.oneof({ weight: 8, arbitrary: fc.constant(1) }, fc.constantFrom("1", 2, null)),
    result: fc.oneof(
      {
        weight: 8,
        arbitrary: fc.record(
          {
            tools: fc.oneof(
              { weight: 8, arbitrary: fc.array(tool, { maxLength: 8 }) },
              fc.jsonValue({ maxDepth: 2 }),
            ),
            nextCursor: fc.oneof(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 1 })),
            _meta: fc.jsonValue({ maxDepth: 2 }),
          },
          { requiredKeys: ["tools"] },
        ),
      },
      fc.jsonValue({ maxDepth: 2 }),
    ),
  },
  { requiredKeys: ["jsonrpc", "id"] },
);
/** One answer, a batch of them, or another message beside it. */
const body = fc.oneof(
  { weight: 6, arbitrary: answer },
  fc.array(answer, { minLength: 1, maxLength: 3 }),
  fc.array(fc.oneof(answer, fc.jsonValue({ maxDepth: 2 })), { minLength: 1, maxLength: 3 }),
);

/** The tools of every listing in an answer as a client reads it, a batch in an event too. */
async function listedTools(body: string, headers: Headers): Promise<Record<string, unknown>[]> {
  const messages: unknown[] = await messagesOf(new Response(body, { headers }));
  return messages
    .flatMap((payload) => (Array.isArray(payload) ? payload : [payload]))
    .flatMap((message) => {
      const tools = isPlainObject(message) && isPlainObject(message.result) && message.result.tools;
      return Array.isArray(tools) ? tools.filter(isPlainObject) : [];
    });
}

describe("whatever the origin answers a tools/list with", () => {
  it("the proxy answers the client, in a JSON body or an event stream, under any profile and rules, and shows no tool the rules hide", async () => {
    let searched = 0;
    await fc.assert(
      fc.asyncProperty(
        body,
        fc.constantFrom(...PROFILES),
        fc.constantFrom(...POLICIES),
        // A JSON body, an event stream, or a resumed one (its requests out of view: by shape).
        fc.constantFrom("json", "stream", "resumed"),
        // A tool ceiling low enough for search mode, and the pages after the first read for it.
        fc.option(
          fc.record({
            maxTools: fc.integer({ min: 1, max: 4 }),
            rest: fc.array(tool, { maxLength: 6 }),
          }),
        ),
        // The next listing: the same text, or another (changed definitions, under `hold` held).
        fc.option(body, { freq: 2 }),
        async (payload, profileName, policy, carried, ceiling, next) => {
          const streamed = carried !== "json";
          const profile = profileOf(profileName, ceiling ? { maxTools: ceiling.maxTools } : {});
          const origin = new URL(`https://any.example/mcp?${crypto.randomUUID()}`);
          const scopes = await toolMapScopes(origin, profile.names);
          const memory = new ToolMapMemory();
          // Listed twice: the second time against what the first left in memory.
          for (const text of [textOf(payload), textOf(next ?? payload)]) {
            const toolMap = new ToolMap(env.TOOL_MAP, scopes, profile, memory, () => {}, policy);
            const response = await rewriteResponse(
              streamed
                ? new Response(`event: message\ndata: ${text}\n\n`, {
                    headers: { "content-type": "text/event-stream" },
                  })
                : new Response(text, { headers: { "content-type": "application/json" } }),
              {
                listIds: carried === "resumed" ? "by-shape" : new Set([1]),
                watchesListChanged: false,
                reads: new ReadBudget(),
                toolMap,
                addressee: { ...unreadAddressee(new Headers()), ids: [1] },
                ...(ceiling && {
                  wholeListing: {
                    isFirstPage: () => true,
                    // Read as toolmap/relist.ts reads the origin's pages.
                    readRest: async () => {
                      const rest = parseJson(textOf(ceiling.rest));
                      return Array.isArray(rest) ? namedTools({ tools: rest }) : undefined;
                    },
                  },
                }),
              },
            );
            expect([200, 502]).toContain(response.status);
            // An event stream the proxy refuses to show ends with an error: that is its answer.
            const read = await response.text().then(
              (body) => body,
              (error: unknown) => {
                if (!streamed || policy === NO_POLICY) throw error;
                return "";
              },
            );
            if (policy.rules !== RULES) continue;
            // Nor in search mode's: a search with no words shows every tool, in the listing's order.
            const search = await toolMap.search();
            for (const searchable of search?.search("", search.size) ?? []) {
              expect(searchable.original).not.toMatch(/^secret/);
              searched++;
            }
            if (response.status !== 200) continue;
            // What the rules hide is in no listing the client reads.
            for (const listed of await listedTools(read, response.headers)) {
              expect(String(listed.name)).not.toMatch(/^secret/);
              expect(
                isPlainObject(listed.annotations) && listed.annotations.destructiveHint,
              ).not.toBe(true);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
    // That search mode was reached at all (74 to 196 tools in 300 runs across 60 seeds).
    expect(searched).toBeGreaterThan(10);
  });
});

describe("a schema whose lists are as long as a listing holds", () => {
  it("is listed under a rule that fixes an argument its dependentRequired names 300,000 others for", async () => {
    // 300,000 names of some 8 bytes: 2.6 MB, within the 16 MiB a listing may be.
    const names = Array.from({ length: 300_000 }, (_, i) => `k${i}`);
    const listing = {
      jsonrpc: "2.0",
      id: 1,
      result: {
        tools: [
          {
            name: "orgs_report",
            inputSchema: {
              type: "object",
              properties: { org: { type: "string" }, k0: { type: "string" } },
              dependentRequired: { org: names },
            },
          },
        ],
      },
    };
    const profile = profileOf("anthropic");
    const origin = new URL(`https://any.example/mcp?${crypto.randomUUID()}`);
    const policy: ToolPolicy = {
      rules: rulesOf({ tools: { orgs_report: { fixed: { org: "acme" } } } }),
      changes: "log",
    };
    const toolMap = new ToolMap(
      env.TOOL_MAP,
      await toolMapScopes(origin, profile.names),
      profile,
      new ToolMapMemory(),
      () => {},
      policy,
    );
    const response = await rewriteResponse(
      new Response(JSON.stringify(listing), { headers: { "content-type": "application/json" } }),
      {
        listIds: new Set([1]),
        watchesListChanged: false,
        reads: new ReadBudget(),
        toolMap,
        addressee: { ...unreadAddressee(new Headers()), ids: [1] },
      },
    );
    expect(response.status).toBe(200);
    const [listed] = await listedTools(await response.text(), response.headers);
    expect(listed?.name).toBe("orgs_report");
    expect(listed?.inputSchema).toMatchObject({ properties: { k0: { type: "string" } } });
    expect(listed?.inputSchema).not.toHaveProperty("properties.org");
  });
});
