/**
 * The whole Worker, inside workerd, against what an untrusted client and an
 * untrusted origin may send (SECURITY.md, threat model): generated requests
 * to the MCP endpoint (paths, methods, media types, revisions, the 2026-07-28
 * headers, bodies of every JSON-RPC shape and every odd lexeme), and generated
 * answers of the gateway's scripted origin (any status, header lines, framing,
 * encoding and body). Each answer must be the one docs/errors.md gives for
 * its input, or the origin's own: never the proxy's 500 nor an
 * `internal_error` line, never a throw in work left to `waitUntil`, and a
 * request the proxy refuses never reaches the origin. What the proxy has
 * nothing to change reaches the origin byte for byte; ids in its own answers
 * are written as the client wrote them.
 *
 * The expected answer to a request is worked out here from docs/errors.md's
 * table, not from the code: where they part, one of them is wrong.
 */
import { waitOnExecutionContext } from "cloudflare:test";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import {
  accept,
  aHeaderedCall,
  aHeaderForm,
  aMessage,
  aToolRequest,
  bytesOf,
  CONTENT_ENCODINGS,
  CONTENT_TYPES,
  DEFECTS,
  METHODS,
  mcpHeaders,
  PATHS,
  QUERIES,
  revisionHeader,
  SIMPLE_BODIES,
  sessionId,
  withDefect,
} from "../helpers/client-arbitraries";
import {
  folded,
  headerMismatch,
  headerRevision,
  isObject,
  isRequest,
  type Limits,
  paramMismatch,
  paramsMisspelled,
  readMessages,
  unknownIdOf,
  verdictOn,
} from "../helpers/documented-answers";
import { Lexeme, Members, written } from "../helpers/json-writer";
import { captureLogs } from "../helpers/logs";
import { anOriginAnswer, ID_MARK } from "../helpers/origin-arbitraries";
import { PROXY_URL, viaProxy } from "../helpers/proxy";
import {
  type ScriptedAnswer,
  type ScriptedRequest,
  scriptedOrigin,
} from "../helpers/scripted-origin";

/**
 * Kept small: the whole file runs in CI, in well under a minute (some 20 s on
 * two cores). The cheaper properties run more: the body's four times (most
 * bodies never reach the origin), the origin's answers' twice; the tenants'
 * fewer (each run lists the origin and writes the tool map, a key at most once a
 * second: KEY_WRITE_MS).
 */
const RUNS = 150;
const TIMEOUT = 60_000;

// An unhandled rejection in the isolate (a promise no one awaits) is a throw the proxy lost.
const unhandled: unknown[] = [];
const onUnhandled = (event: PromiseRejectionEvent) => unhandled.push(event.reason);
beforeAll(() => addEventListener("unhandledrejection", onUnhandled));
afterAll(() => {
  removeEventListener("unhandledrejection", onUnhandled);
  expect(unhandled).toEqual([]);
});

/**
 * Call analytics' dataset, for tenants that bind it (`WRANGLER_ENV` set):
 * what each point has past what Analytics Engine takes (docs/observability.md).
 * Noted, not thrown: the proxy catches what a write throws.
 */
const pointsPastBounds: string[] = [];
const points: AnalyticsEngineDataset = {
  writeDataPoint: (point) => {
    const bytes = (text: string) => new TextEncoder().encode(text).length;
    const blobs = (point?.blobs ?? []) as string[];
    const past = [
      bytes(String(point?.indexes?.[0] ?? "")) > 96 && "an index over 96 bytes",
      blobs.length > 20 && "over 20 blobs",
      blobs.reduce((sum, blob) => sum + bytes(blob), 0) > 5120 && "blobs over 5,120 bytes",
      (point?.doubles ?? []).some((double) => !Number.isFinite(double)) && "a double not finite",
    ];
    pointsPastBounds.push(...past.filter((problem) => problem !== false));
  },
};
const TOOLS = [
  {
    name: "files.read",
    inputSchema: {
      type: "object",
      properties: { path: { type: "string" }, count: { type: "integer" } },
    },
  },
  {
    name: "weather",
    inputSchema: {
      type: "object",
      properties: {
        region: { type: "string", "x-mcp-header": "Region" },
        days: { type: "integer", "x-mcp-header": "Days" },
      },
    },
  },
  { name: "secret.admin", inputSchema: { type: "object" } },
  { name: "a/b", inputSchema: { type: "object", properties: {} } },
];
/** The `Mcp-Param-*` headers the tools' schemas declare: tool, parameter, header. */
const DECLARED = { weather: { region: "Region", days: "Days" } };
const json = (body: string): ScriptedAnswer => ({
  status: 200,
  headers: [["Content-Type", "application/json"]],
  body,
});
/** A well-behaved origin: each request answered with its own id. */
const WELL_BEHAVED: Record<string, ScriptedAnswer> = {
  "tools/list": json(
    `{"jsonrpc":"2.0","id":${ID_MARK},"result":{"tools":${JSON.stringify(TOOLS)}}}`,
  ),
  "tools/call": json(
    `{"jsonrpc":"2.0","id":${ID_MARK},"result":{"content":[{"type":"text","text":"ok"}]}}`,
  ),
  "*": json(`{"jsonrpc":"2.0","id":${ID_MARK},"result":{}}`),
};

interface Outcome {
  status: number;
  headers: Headers;
  text: string;
  /** What reached the origin for this request (the proxy's own listings included). */
  reached: ScriptedRequest[];
  /** `internal_error` and `analytics_failed` lines, and what data points had past their bounds. */
  failures: unknown[];
}

/**
 * The requests a proxy of `vars` sends on to a scripted origin, one at a
 * time, and what each got; `script`, the query that has the origin's host
 * answer the script at another path (a relayed `/.well-known/` document).
 */
async function harness(answers: Record<string, ScriptedAnswer>, vars: Record<string, string> = {}) {
  const origin = await scriptedOrigin(answers, ID_MARK);
  const contexts: ExecutionContext[] = [];
  const bindings = vars.WRANGLER_ENV ? { CALLS: points } : {};
  const proxy = viaProxy(
    { ORIGIN_URL: origin.originUrl, ...vars },
    { app: createApp(), contexts, bindings },
  );
  const send = async (url: string, init: RequestInit): Promise<Outcome> => {
    const logs = captureLogs();
    try {
      const response = await proxy(url, init);
      const text = await response.text();
      for (const ctx of contexts.splice(0)) await waitOnExecutionContext(ctx);
      const reached = await origin.received();
      return {
        status: response.status,
        headers: response.headers,
        text,
        reached,
        failures: [
          ...logs.events("internal_error"),
          ...logs.events("analytics_failed"),
          ...logs.problems(),
          ...pointsPastBounds.splice(0),
        ],
      };
    } finally {
      logs.restore();
    }
  };
  return Object.assign(send, { script: new URL(origin.originUrl).search });
}

/** Never the proxy's own 500 (an origin's passes on), nor a line saying it failed. */
function expectNoInternalError(outcome: Outcome) {
  expect(outcome.failures).toEqual([]);
  if (outcome.status === 500) expect(outcome.text).not.toContain("in the proxy");
}

/**
 * The proxy's own error for a request it did not send on: `status`, `code`,
 * and the id its revision writes (no body to a `HEAD`: the runtime sends none).
 */
function expectRefused(
  outcome: Outcome,
  status: number,
  code: number | number[],
  id: object,
  head = false,
) {
  expect(outcome.reached).toEqual([]);
  expect(outcome.status).toBe(status);
  if (head) return;
  const body = JSON.parse(outcome.text);
  expect(body.jsonrpc).toBe("2.0");
  expect([code].flat()).toContain(body.error.code);
  expect("id" in body ? { id: body.id } : {}).toEqual(id);
}

describe("fuzz: a request's path, method and headers", () => {
  it(
    "get the answer docs/errors.md gives them, and a refused request never reaches the origin",
    async () => {
      const send = await harness(WELL_BEHAVED);
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...PATHS),
          fc.constantFrom(...QUERIES),
          fc.constantFrom(...METHODS),
          fc.constantFrom(...CONTENT_TYPES),
          fc.constantFrom(...CONTENT_ENCODINGS),
          fc.record({ revision: revisionHeader, session: sessionId, accept }),
          fc.constantFrom(...SIMPLE_BODIES),
          async (
            [path, leadsTo],
            [query, setsOrigins],
            method,
            [type, badType],
            [coding, coded],
            more,
            body,
          ) => {
            const headers = new Headers();
            if (type !== undefined) headers.set("content-type", type);
            if (coding !== undefined) headers.set("content-encoding", coding);
            if (more.revision !== undefined) headers.set("mcp-protocol-version", more.revision);
            if (more.session !== null) headers.set("mcp-session-id", more.session);
            if (more.accept !== null) headers.set("accept", more.accept);
            const url = `${new URL(PROXY_URL).origin}${path}${query}`;
            expect(new URL(url).pathname).toBe(path);
            const outcome = await send(url, {
              method,
              headers,
              body: method === "POST" || method === "PUT" || method === "PATCH" ? body : undefined,
            });
            expectNoInternalError(outcome);
            const id = unknownIdOf(headerRevision(headers));
            const head = method === "HEAD";
            if (leadsTo === "refused") return expectRefused(outcome, 400, -32600, id, head);
            if (leadsTo === "missing") {
              expect(outcome.reached).toEqual([]);
              expect(outcome.status).toBe(404);
              if (!head) expect(JSON.parse(outcome.text)).toHaveProperty("error");
              return;
            }
            if (setsOrigins) return expectRefused(outcome, 400, -32600, id, head);
            if (!["GET", "POST", "DELETE", "OPTIONS"].includes(method)) {
              expect(outcome.reached).toEqual([]);
              expect(outcome.status).toBe(405);
              expect(outcome.headers.get("allow")).toBe("GET, POST, DELETE, OPTIONS");
              if (!head)
                expect(JSON.parse(outcome.text)).toMatchObject({ error: { code: -32600 } });
              return;
            }
            if (method === "POST" && (badType || coded)) {
              expectRefused(outcome, 415, -32600, id);
              if (!badType) expect(outcome.headers.get("accept-encoding")).toBe("identity");
              return;
            }
            // Sent on: the origin accepts a notification (202) and answers anything else with a 200,
            // which the proxy passes on.
            expect(outcome.reached.at(-1)?.method).toBe(method);
            const notification = method === "POST" && !body.includes('"id"');
            expect(outcome.status).toBe(notification ? 202 : 200);
          },
        ),
        { numRuns: RUNS },
      );
    },
    TIMEOUT,
  );
});

/**
 * The proxy's own answer to the lone request `message` (as generated) names
 * it by its id: a number as the client wrote it (an exact reader reads
 * 12345678901234567891 as no double writes it), a string as the same string.
 */
function expectAnswersId(answerText: string, message: unknown) {
  if (!(message instanceof Members)) return;
  const [, id] = message.members.find(([key]) => key === "id") ?? [];
  if (id instanceof Lexeme && typeof id.value === "number") {
    expect(answerText).toContain(`"id":${id.text},`);
  } else {
    expect(JSON.parse(answerText).id).toEqual(id instanceof Lexeme ? id.value : id);
  }
}

const BODY_LIMITS: Limits = { maxBodyBytes: 65536, maxBatch: 4 };

describe("fuzz: a POST body, and the 2026-07-28 headers beside it", () => {
  it(
    "gets the answer docs/errors.md gives it; one the proxy has nothing to change reaches the origin byte for byte",
    async () => {
      const send = await harness(WELL_BEHAVED, {
        MAX_BODY_BYTES: String(BODY_LIMITS.maxBodyBytes),
        MAX_BATCH_MESSAGES: String(BODY_LIMITS.maxBatch),
      });
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            { weight: 3, arbitrary: aMessage },
            { weight: 1, arbitrary: aHeaderedCall },
            fc.array(aMessage, { minLength: 0, maxLength: 6 }),
          ),
          fc.constantFrom(...DEFECTS),
          fc.oneof(
            { weight: 4, arbitrary: fc.integer({ min: 0, max: 600 }) },
            fc.integer({ min: 500, max: 520 }),
            fc.integer({ min: 1000, max: 20_000 }),
          ),
          revisionHeader,
          fc.record({
            method: fc.constantFrom("match", "match", "other", "none", "none"),
            name: aHeaderForm,
            region: aHeaderForm,
          }),
          async (shapeOf, defect, levels, revision, forms) => {
            const shape = withDefect(shapeOf, defect, levels);
            const text = written(shape);
            const bytes = bytesOf(text, defect, levels, BODY_LIMITS.maxBodyBytes);
            const parsedFirst = (() => {
              try {
                const value = JSON.parse(text);
                const first = Array.isArray(value) ? value[0] : value;
                return isObject(first) ? first : {};
              } catch {
                return {};
              }
            })();
            const headers = mcpHeaders(parsedFirst, forms);
            headers.set("content-type", "application/json");
            headers.set("accept", "application/json, text/event-stream");
            if (revision !== undefined) headers.set("mcp-protocol-version", revision);
            const outcome = await send(PROXY_URL, { method: "POST", headers, body: bytes });
            expectNoInternalError(outcome);

            const verdict = verdictOn(bytes, shape, BODY_LIMITS);
            const unknownId = unknownIdOf(headerRevision(headers));
            if (verdict.refused)
              return expectRefused(outcome, verdict.status, verdict.code, unknownId);
            const requests = verdict.messages.filter(isRequest);
            const firstShape = Array.isArray(shape) ? shape[0] : shape;
            // What reached the origin of the client's: not the listings the proxy asked for itself.
            const sentOn = outcome.reached.filter(
              (r) => !r.body.includes("mcp-edge-rewriter/relist/"),
            );
            const [first = {}] = verdict.messages;
            // In the proxy's order: headers beside the body, params a lenient reader reads
            // otherwise, a call's Mcp-Param-* beside the arguments it forwards.
            const refusal =
              headerMismatch(headers, verdict) !== undefined
                ? -32020
                : paramsMisspelled(verdict)
                  ? -32602
                  : verdict.batch
                    ? undefined
                    : paramMismatch(headers, first, DECLARED);
            if (refusal === "either") return;
            if (refusal !== undefined) {
              expect(sentOn).toEqual([]);
              expect(outcome.status).toBe(400);
              const answer = JSON.parse(outcome.text);
              const errors = Array.isArray(answer) ? answer : [answer];
              const code = typeof refusal === "number" ? refusal : -32020;
              for (const error of errors) expect(error.error.code).toBe(code);
              if (verdict.batch && requests.length > 0) {
                expect(errors).toHaveLength(requests.length);
              }
              if (!verdict.batch && requests.length === 1) {
                expectAnswersId(outcome.text, firstShape);
              }
              return;
            }
            // The origin accepts notifications and responses alone with a 202, and answers requests.
            expect(outcome.status).toBe(requests.length === 0 ? 202 : 200);
            const calls = requests.filter((m) => m.method === "tools/call");
            if (calls.length === 0) {
              // Nothing for the proxy to change: the client's own bytes, whatever they spell.
              expect(sentOn.map((r) => r.body)).toEqual([
                new TextDecoder("utf-8", { fatal: false, ignoreBOM: true }).decode(bytes),
              ]);
            }
            if (requests.length === 0) return;
            const answer = JSON.parse(outcome.text);
            if (verdict.batch) expect(answer).toHaveLength(requests.length);
            // The proxy's own answer to a lone call: its id as the client wrote it.
            if (!verdict.batch && calls.length === 1 && sentOn.length === 0) {
              expectAnswersId(outcome.text, firstShape);
            }
          },
        ),
        { numRuns: RUNS * 4 },
      );
    },
    TIMEOUT,
  );
});

/** Settings a tenant may have, each a proxy of its own in front of the same origin. */
const TENANTS: ReadonlyArray<Record<string, string>> = [
  {},
  { TOOL_RULES: JSON.stringify({ hide: ["secret.*"] }) },
  {
    TOOL_RULES: JSON.stringify({
      hide: ["secret.*"],
      tools: { "files.read": { name: "read_file", fixed: { count: 1 } } },
    }),
    TOOL_CHANGES: "hold",
  },
  { ARGUMENT_VALIDATION: "enforce" },
  { PROFILE: "gemini", ARGUMENT_VALIDATION: "off" },
  // Search mode: more tools than the ceiling.
  { MAX_TOOLS: "2", NAME_MAX_LENGTH: "12" },
  {
    WRANGLER_ENV: "fuzz",
    CALLS_ANSWER_SAMPLING_RATE: "1",
    TOOL_RULES: JSON.stringify({ hide: ["secret.*"] }),
  },
];
const PROFILE_PATHS = ["/mcp", "/mcp", "/mcp/openai-strict", "/mcp/gemini", "/mcp/anthropic"];

/** Whether `name` (an origin name, or one the proxy gave it) is the hidden `secret.admin`'s. */
const namesSecret = (name: unknown) =>
  typeof name === "string" &&
  folded(name)
    .replace(/[^a-z]/g, "")
    .startsWith("secretadmin");

describe("fuzz: tools/call and tools/list under each tenant's settings and profile", () => {
  it(
    "answer every request, show and call no hidden tool, and write ids back as sent",
    async () => {
      const sends = await Promise.all(TENANTS.map((vars) => harness(WELL_BEHAVED, vars)));
      await fc.assert(
        fc.asyncProperty(
          fc.nat({ max: TENANTS.length - 1 }),
          fc.constantFrom(...PROFILE_PATHS),
          fc.array(aToolRequest, { minLength: 1, maxLength: 4 }),
          fc.boolean(),
          fc.constantFrom("2025-11-25", "2026-07-28"),
          async (tenant, path, requests, batch, revision) => {
            const send = sends[tenant] as (typeof sends)[number];
            const ids = new Set<unknown>();
            const unique = requests.filter((r) => !ids.has(Number(r.id)) && ids.add(Number(r.id)));
            const body = batch ? unique : unique.slice(0, 1);
            const sent = new TextEncoder().encode(JSON.stringify(batch ? body : body[0]));
            const headers = new Headers({
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              "mcp-protocol-version": revision,
            });
            const outcome = await send(`${new URL(PROXY_URL).origin}${path}`, {
              method: "POST",
              headers,
              body: sent,
            });
            expectNoInternalError(outcome);
            // Keys that fold alike (`a` beside `A`) are refused before anything else.
            const verdict = verdictOn(sent, body, { maxBodyBytes: 4 * 1024 * 1024, maxBatch: 32 });
            if (verdict.refused) {
              return expectRefused(outcome, verdict.status, verdict.code, unknownIdOf(revision));
            }
            // A request whose header is not the revision its `_meta` claims (a batch's: each message's).
            if (headerMismatch(headers, verdict) !== undefined) {
              expect(outcome.status).toBe(400);
              const errors = [JSON.parse(outcome.text)].flat();
              expect(errors.map((error) => error.id).sort()).toEqual(
                body.map((request) => request.id).sort(),
              );
              for (const error of errors) expect(error).toMatchObject({ error: { code: -32020 } });
              expect(outcome.reached).toEqual([]);
              return;
            }
            // Params that write a member the proxy reads in a spelling lenient readers take for it.
            if (paramsMisspelled(verdict)) {
              expect(outcome.status).toBe(400);
              const errors = [JSON.parse(outcome.text)].flat();
              for (const error of errors) expect(error.error.code).toBe(-32602);
              expect(outcome.reached).toEqual([]);
              return;
            }
            expect(outcome.status).toBe(200);
            const answers = [JSON.parse(outcome.text)].flat();
            expect(answers).toHaveLength(body.length);
            for (const answer of answers) {
              expect(body.some((r) => r.id === answer.id)).toBe(true);
            }
            if (TENANTS[tenant]?.TOOL_RULES === undefined) return;
            for (const answer of answers) {
              for (const tool of answer.result?.tools ?? [])
                expect(namesSecret(tool.name)).toBe(false);
            }
            for (const reached of outcome.reached) {
              const sent = [JSON.parse(reached.body)].flat();
              for (const message of sent) {
                if (message.method === "tools/call")
                  expect(namesSecret(message.params?.name)).toBe(false);
              }
            }
          },
        ),
        { numRuns: Math.round((RUNS * 2) / 3) },
      );
    },
    TIMEOUT,
  );
});

/** What a client asks of the origin through the proxy. */
const CLIENT_ASKS = [
  { method: "POST", body: { jsonrpc: "2.0", id: 1, method: "tools/list" } },
  { method: "POST", body: { jsonrpc: "2.0", id: 1, method: "tools/list" } },
  {
    method: "POST",
    body: { jsonrpc: "2.0", id: 1, method: "tools/list", params: { cursor: "next" } },
  },
  {
    method: "POST",
    body: {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "files_read", arguments: { path: "x" } },
    },
  },
  { method: "POST", body: { jsonrpc: "2.0", id: 3, method: "ping" } },
  {
    method: "POST",
    // Written as sent: an integer past 2^53, which a double rounds.
    body: '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"files_read","arguments":{"n":12345678901234567891,"path":"p"}}}',
    headers: { "mcp-method": "tools/call", "mcp-name": "files_read", "mcp-param-n": "7" },
  },
  {
    method: "POST",
    body: [
      { jsonrpc: "2.0", id: 1, method: "tools/list" },
      {
        jsonrpc: "2.0",
        id: 4,
        method: "tools/call",
        params: { name: "no_such_tool", arguments: [] },
      },
      { jsonrpc: "2.0", id: 3, method: "ping" },
    ],
  },
  { method: "GET", body: undefined },
  { method: "GET", body: undefined, lastEventId: "1" },
  { method: "DELETE", body: undefined },
  // A sign-in discovery document, relayed from the origin's host (Hono answers a HEAD anew).
  { method: "GET", body: undefined, path: "/.well-known/oauth-authorization-server" },
  { method: "HEAD", body: undefined, path: "/.well-known/openid-configuration" },
] as const;
const ORIGIN_TENANTS: ReadonlyArray<Record<string, string>> = [
  {},
  { TOOL_RULES: JSON.stringify({ hide: ["secret.*"] }) },
  { TOOL_RULES: JSON.stringify({ hide: ["secret.*"] }), TOOL_CHANGES: "hold", PROFILE: "gemini" },
  { TOOL_RULES: JSON.stringify({ hide: ["secret.*"] }), MAX_TOOLS: "2" },
  { WRANGLER_ENV: "fuzz", CALLS_ANSWER_SAMPLING_RATE: "1" },
];
/** The codes of the proxy's own errors that stand in for an origin's answer (docs/errors.md). */
const STAND_IN_CODES: Record<number, number[]> = { 502: [-32000], 503: [-32603], 504: [-32001] };

describe("fuzz: whatever the origin answers", () => {
  it(
    "the client gets the origin's answer (renamed, relayed, or refused as docs/errors.md says), and never a tool the rules hide",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          anOriginAnswer,
          anOriginAnswer,
          fc.constantFrom(...CLIENT_ASKS),
          fc.nat({ max: ORIGIN_TENANTS.length - 1 }),
          fc.constantFrom("2025-11-25", "2026-07-28"),
          async (listing, other, ask, tenant, revision) => {
            const send = await harness(
              { "tools/list": listing, "*": other },
              ORIGIN_TENANTS[tenant],
            );
            const headers = new Headers({
              accept: "application/json, text/event-stream",
              "mcp-protocol-version": revision,
            });
            if (ask.body !== undefined) headers.set("content-type", "application/json");
            if ("lastEventId" in ask) headers.set("last-event-id", ask.lastEventId);
            for (const [name, value] of Object.entries("headers" in ask ? ask.headers : {})) {
              headers.set(name, value);
            }
            const url = "path" in ask ? `http://proxy.test${ask.path}${send.script}` : PROXY_URL;
            let outcome: Outcome;
            try {
              outcome = await send(url, {
                method: ask.method,
                headers,
                body:
                  ask.body === undefined || typeof ask.body === "string"
                    ? ask.body
                    : JSON.stringify(ask.body),
              });
            } catch (error) {
              // The origin's body failed midway (a broken encoding or length): the client's does too.
              // Or the rules hide tools, and an event stream held a listing the proxy could not read:
              // it ends there rather than show it (listing_refused).
              const streamed = [listing, other].some(({ headers: h }) =>
                h.some(
                  ([n, v]) => n === "Content-Type" && v.toLowerCase().includes("event-stream"),
                ),
              );
              const hides = ORIGIN_TENANTS[tenant]?.TOOL_RULES !== undefined;
              expect(listing.broken || other.broken || (hides && streamed), String(error)).toBe(
                true,
              );
              return;
            }
            expectNoInternalError(outcome);
            const statuses = [listing.status, other.status];
            if (outcome.status === 400 && "headers" in ask && !statuses.includes(400)) {
              // A declared parameter's header that the arguments do not bear out (docs/errors.md).
              expect(JSON.parse(outcome.text)).toMatchObject({ id: 5, error: { code: -32020 } });
            } else if (STAND_IN_CODES[outcome.status] && !statuses.includes(outcome.status)) {
              const answers = [JSON.parse(outcome.text)].flat();
              for (const answer of answers)
                expect(STAND_IN_CODES[outcome.status]).toContain(answer.error.code);
            } else if ("path" in ask) {
              // A relayed document: the origin's answer, as it came (a redirect too).
              expect(outcome.status).toBe(other.status);
            } else if (outcome.status >= 300 && outcome.status < 400) {
              // A redirect (a 3xx with a Location) is the proxy's 502: a 3xx passed on had none.
              const located = (a: ScriptedAnswer) => a.headers.some(([n]) => n === "Location");
              expect([listing, other].some((a) => a.status === outcome.status && !located(a))).toBe(
                true,
              );
            } else {
              // The origin's status, or the proxy's own answers (to a call it could not resolve).
              expect([...statuses, 200]).toContain(outcome.status);
            }
            const asksList =
              JSON.stringify(ask.body ?? "").includes("tools/list") || "lastEventId" in ask;
            const ok = outcome.status >= 200 && outcome.status < 300;
            const hides = ORIGIN_TENANTS[tenant]?.TOOL_RULES !== undefined;
            if (hides && asksList && ok && outcome.text !== "") {
              const encoding = outcome.headers.get("content-encoding") ?? "identity";
              expect(["identity", "gzip", "br"]).toContain(encoding.toLowerCase());
              // What a client reads: the whole text of a JSON answer, an event stream's events.
              const type = (outcome.headers.get("content-type") ?? "").toLowerCase();
              const read = type.includes("text/event-stream")
                ? JSON.stringify(readMessages(outcome.text, outcome.headers))
                : outcome.text;
              expect(read).not.toContain("secret.admin");
            }
            // A listing in JSON or an event stream, labeled as one (not two labels joined, nor another
            // charset): renamed, but for one nested deeper than 512 levels, which passes as it came.
            const label = outcome.headers.get("content-type") ?? "";
            const readable = /^(application\/json|text\/event-stream)(; ?charset=utf-8)?$/i.test(
              label,
            );
            if (!hides && asksList && ok && readable && !outcome.text.includes("[[[[")) {
              for (const message of readMessages(outcome.text, outcome.headers)) {
                // An answer to request 1 as the SDK clients take one: by `Number(id)`, "1" too.
                const tools =
                  isObject(message) &&
                  Number(message.id) === 1 &&
                  isObject(message.result) &&
                  message.result.tools;
                for (const tool of Array.isArray(tools) ? tools : []) {
                  if (isObject(tool) && typeof tool.name === "string") {
                    expect(tool.name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
                  }
                }
              }
            }
          },
        ),
        { numRuns: RUNS * 2 },
      );
    },
    TIMEOUT,
  );
});

describe("an origin whose last answer is informational (1xx), with no final answer after it", () => {
  // The runtime's fetch fails on it (and logs an uncaught "Network connection lost" of its own, a
  // bare fetch's too): the proxy answers as for an origin it could not reach.
  it.each([100, 150, 199])("%i: the proxy's 502 with the request's id", async (status) => {
    const send = await harness({
      "*": { ...json('{"jsonrpc":"2.0","id":1,"result":{}}'), status },
    });
    const outcome = await send(PROXY_URL, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: '{"jsonrpc":"2.0","id":7,"method":"ping"}',
    });
    expectNoInternalError(outcome);
    expect(outcome.status).toBe(502);
    expect(JSON.parse(outcome.text)).toMatchObject({ id: 7, error: { code: -32000 } });
  });
});
