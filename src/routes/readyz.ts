/**
 * `GET /readyz`: whether the proxy can serve its origin now, for monitors and
 * load balancers (`/healthz` says only that the Worker runs). docs/transport.md,
 * "Health and readiness".
 *
 * - Relay mode: the proxy's own `initialize` and `tools/list` (relist.ts), with
 *   `ORIGIN_URL` as it is and no client's credentials: `200` with the tool
 *   count. An origin that has no `initialize`, as one that serves 2026-07-28
 *   alone has none, is listed as that revision lists, with no session. An
 *   origin that answers `401` with a `Bearer` challenge is behind
 *   sign-in: it answers as an MCP server, and lists its tools to signed-in
 *   clients only, so it is ready (`signIn: "required"`, no count).
 * - Broker mode: the proxy holds no token of its own to list with; ready when
 *   the origin's authorization server's metadata can be read, as a sign-in
 *   reads it.
 * - Gate mode: the proxy's requests carry the origin's key only for a
 *   signed-in user, so the origin is not listed; ready when the identity
 *   provider can be discovered anew (OpenID Connect; GitHub's endpoints are
 *   known), as a sign-in discovers it.
 * - Otherwise `503` with the reason.
 *
 * Bounded: a check takes at most `READY_TIMEOUT_MS` (or `ORIGIN_TIMEOUT_MS`,
 * when shorter), reads what a relist may, within the isolate's read budget
 * as every read of an origin's answer is (read-bounded.ts), and its result is kept
 * `READY_TTL_MS` per isolate; one check at a time per isolate (a promise of
 * another request's is never awaited: workerd does not resolve it across
 * requests), the others answered with the last result, or 503 while none; a
 * check whose monitor left is given up after `READY_TIMEOUT_MS` (`Readiness`).
 */
import type { Context } from "hono";
import packageJson from "../../package.json";
import { identityProvider } from "../auth/idp";
import { publicUrls } from "../auth/public-url";
import { discoverUpstream } from "../auth/upstream";
import { UpstreamError } from "../auth/upstream-requests";
import type { Config } from "../config";
import { isPlainObject } from "../json";
import { logEvent } from "../log";
import { unreadAddressee } from "../protocol/jsonrpc";
import { ownStatelessCause } from "../protocol/revision";
import { firstOfItsName, type ListedTool } from "../protocol/tools-list";
import { readAnswer, relistTools } from "../toolmap/relist";
import { errorDetail, fetchOrigin } from "../transport/origin";
import type { Hold } from "../transport/read-bounded";
import type { AppEnv } from "./app-env";

/** How long a check's result answers `/readyz` in an isolate. */
export const READY_TTL_MS = 5_000;
/**
 * The longest a check takes, all its requests together: a check under way longer than this lost
 * its request (`Readiness.of`).
 */
export const READY_TIMEOUT_MS = 10_000;
/** What the proxy asks for in its `initialize`: the last revision with sessions. */
const PROTOCOL_VERSION = "2025-11-25";
/** Who the proxy's requests of a check say their client is. */
const CLIENT_INFO = { name: "mcp-edge-rewriter (readyz)", version: packageJson.version };

type Check =
  | {
      ready: true;
      tools?: number;
      signIn?: "required";
      authorizationServer?: string;
      identityProvider?: string;
    }
  | { ready: false; reason: string };

interface Checked {
  check: Check;
  at: number;
}

/** What an isolate keeps of readiness: the last check, per origin and mode (a few settings, a few entries). */
export class Readiness {
  private readonly last = new Map<string, Checked>();
  /**
   * When the check under way began. A monitor that leaves before the check is done has the
   * runtime cancel its request, and with it the check's requests and its timer: that check never
   * ends, nor runs its `finally`. Past `READY_TIMEOUT_MS`, which a running check never passes, it
   * is given up, or every later check of the isolate would wait for it.
   */
  private checkingSince: number | undefined;

  constructor(private readonly now: () => number = Date.now) {}

  /** The result for `key`, checked anew when the last is older than `READY_TTL_MS`. */
  async of(key: string, check: () => Promise<Check>): Promise<Checked | undefined> {
    const last = this.last.get(key);
    const now = this.now();
    if (last && now - last.at < READY_TTL_MS) return last;
    if (this.checkingSince !== undefined && now - this.checkingSince < READY_TIMEOUT_MS) {
      return last;
    }
    this.checkingSince = now;
    try {
      // Dated when it finished: what it found is how the origin was then, however long it took.
      const result = await check();
      const checked = { check: result, at: this.now() };
      // One configuration an isolate, as a rule: the map never holds more than a few.
      if (this.last.size >= 16) this.last.clear();
      this.last.set(key, checked);
      return checked;
    } finally {
      // Not a check begun since, in place of this one given up.
      if (this.checkingSince === now) this.checkingSince = undefined;
    }
  }
}

/**
 * `check`, or not ready with its reason after `ms`, and then the signal it
 * was handed aborted: its requests to the origin end, whatever reads them (an
 * origin that answers and then sends nothing would keep them open, and what
 * they read, for as long as the isolate lives). Logged when not ready.
 */
export async function checkWithin(
  ms: number,
  originUrl: URL,
  check: (timeUp: AbortSignal) => Promise<Check>,
): Promise<Check> {
  const origin = originUrl.host;
  const timeUp = new AbortController();
  // An error no step expected is told to the log only: /readyz answers anyone. A message may
  // quote what it was given (ORIGIN_URL, whose path or query may hold a key): the log has it
  // without them.
  let detail: string | undefined;
  const failed = (error: unknown): Check => {
    detail = errorDetail(error, originUrl);
    return { ready: false, reason: "the check failed (origin_unready's detail says why)" };
  };
  // Begun before the timer: a step's own timeout of the same length ends first, with its reason.
  const checking = check(timeUp.signal).catch(failed);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<Check>((resolve) => {
    timer = setTimeout(() => {
      resolve({ ready: false, reason: `the origin did not finish answering within ${ms} ms` });
      timeUp.abort();
    }, ms);
  });
  try {
    const checked = await Promise.race([checking, late]);
    if (!checked.ready) logEvent("origin_unready", { origin, reason: checked.reason, detail });
    return checked;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

const isBearerChallenge = (response: Response) =>
  /^\s*bearer\b/i.test(response.headers.get("www-authenticate") ?? "");

/** The origin's answer to a request that failed, in words, its body unread. */
async function refusal(what: string, response: Response): Promise<Check> {
  await response.body?.cancel();
  return { ready: false, reason: `the origin answered ${what} with HTTP ${response.status}` };
}

/**
 * Relay mode: `initialize`, `notifications/initialized`, then the whole
 * `tools/list`, what is read of them taken from `hold`; `timeUp` ends them.
 */
async function listOrigin(
  config: Config,
  timeoutMs: number,
  hold: Hold,
  timeUp: AbortSignal,
): Promise<Check> {
  const target = config.originUrl;
  const headers = new Headers({
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  });
  const addressee = unreadAddressee(headers);
  const id = `mcp-edge-rewriter/ready/${crypto.randomUUID()}`;
  const initialize = await fetchOrigin(
    target,
    {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "initialize",
        params: {
          protocolVersion: PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: CLIENT_INFO,
        },
      }),
      clientLeft: timeUp,
    },
    timeoutMs,
    addressee,
  );
  if (initialize.kind === "failed") {
    await initialize.response.body?.cancel();
    return {
      ready: false,
      reason: `the origin ${initialize.failure === "timeout" ? `did not answer within ${timeoutMs} ms` : "could not be reached"}`,
    };
  }
  /**
   * An origin that serves 2026-07-28 alone has no `initialize` (the SDK 2.x's answers it with
   * `400`): it lists its tools to a request with that revision's envelope, as its clients list
   * them. `unready` stands where that listing fails too.
   */
  const listedStateless = async (unready: Check): Promise<Check> => {
    const tools = await relistTools(
      target,
      headers,
      ownStatelessCause(CLIENT_INFO),
      { ...config, originTimeoutMs: timeoutMs },
      { hold, clientLeft: timeUp },
    );
    return tools === undefined ? unready : { ready: true, tools: listedCount(tools) };
  };
  const { response } = initialize;
  if (response.status === 401 && isBearerChallenge(response)) {
    await response.body?.cancel();
    return { ready: true, signIn: "required" };
  }
  if (!response.ok) return listedStateless(await refusal("initialize", response));
  let answer: Record<string, unknown> | undefined;
  try {
    answer = await readAnswer(response, id, { bytes: 0 }, hold);
  } catch {}
  const result = answer?.result;
  if (!isPlainObject(result) || typeof result.protocolVersion !== "string") {
    return listedStateless({
      ready: false,
      reason: "the origin's answer to initialize is no MCP initialize result",
    });
  }
  const session = response.headers.get("mcp-session-id");
  headers.set("mcp-protocol-version", result.protocolVersion);
  if (session !== null) headers.set("mcp-session-id", session);
  const initialized = await fetchOrigin(
    target,
    {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      clientLeft: timeUp,
    },
    timeoutMs,
    addressee,
  );
  await initialized.response.body?.cancel();

  let unauthorized: Response | undefined;
  const tools = await relistTools(
    target,
    headers,
    undefined,
    { ...config, originTimeoutMs: timeoutMs },
    {
      onUnauthorized: (answered) => {
        unauthorized = answered;
      },
      hold,
      clientLeft: timeUp,
    },
  );
  if (session !== null) {
    // The session ends with the check; whether the origin took it changes nothing.
    const ended = await fetchOrigin(
      target,
      { method: "DELETE", headers, body: null },
      timeoutMs,
      addressee,
    );
    await ended.response.body?.cancel();
  }
  if (unauthorized) {
    const signIn = isBearerChallenge(unauthorized);
    await unauthorized.body?.cancel();
    return signIn
      ? { ready: true, signIn: "required" }
      : { ready: false, reason: "the origin answered tools/list with HTTP 401" };
  }
  return tools === undefined
    ? {
        ready: false,
        reason: "the origin's tools/list could not be read whole (relist_failed says why)",
      }
    : { ready: true, tools: listedCount(tools) };
}

/** How many tools a client is listed of `tools`: a name the origin lists again is shown once. */
function listedCount(tools: readonly ListedTool[]): number {
  const seen = new Set<string>();
  let count = 0;
  for (const tool of tools) if (firstOfItsName(tool, seen)) count++;
  return count;
}

/** A sign-in's setup checked, or why it is not ready: a reason of the proxy's own words. */
const signInCheck = (found: Promise<Check>, what: string): Promise<Check> =>
  found.catch(
    (error): Check => ({
      ready: false,
      reason: error instanceof UpstreamError ? error.message : `the ${what} could not be checked`,
    }),
  );

/** What `/readyz` checks in the mode `config` is in; `timeUp` ends its origin requests. */
function checkOf(
  c: Context<AppEnv>,
  config: Config,
  timeoutMs: number,
  timeUp: AbortSignal,
): Promise<Check> {
  const { auth } = config;
  const memory = c.get("isolate").signIn;
  switch (auth.mode) {
    case "broker":
      return signInCheck(
        discoverUpstream(config, auth, new Headers(), memory, { fresh: true }).then(({ as }) => ({
          ready: true,
          authorizationServer: new URL(as.issuer).host,
        })),
        "sign-in setup",
      );
    case "gate":
      return signInCheck(
        identityProvider(config, auth, publicUrls(config, new URL(c.req.url)), memory, {
          fresh: true,
        }).then(({ host }) => ({ ready: true, identityProvider: host })),
        "identity provider",
      );
    default: {
      // What the check reads counts with what the isolate's requests read, until it is done.
      const hold = c.get("isolate").reads.hold();
      return listOrigin(config, timeoutMs, hold, timeUp).finally(() => hold.release());
    }
  }
}

export async function readyz(c: Context<AppEnv>): Promise<Response> {
  const config = c.get("config");
  const { auth } = config;
  const timeoutMs = Math.min(config.originTimeoutMs, READY_TIMEOUT_MS);
  const idp = auth.mode === "gate" ? `\n${auth.idp.issuer.href}` : "";
  const checked = await c
    .get("isolate")
    .readiness.of(`${auth.mode}\n${config.originUrl.href}${idp}`, () =>
      checkWithin(timeoutMs, config.originUrl, (timeUp) => checkOf(c, config, timeoutMs, timeUp)),
    );
  const origin = config.originUrl.host;
  const headers = { "cache-control": "no-store" };
  if (!checked) {
    return Response.json(
      { status: "unready", origin, reason: "a check is under way" },
      { status: 503, headers: { ...headers, "retry-after": "1" } },
    );
  }
  const { check, at } = checked;
  const checkedSecondsAgo = Math.floor((Date.now() - at) / 1000);
  if (!check.ready) {
    return Response.json(
      { status: "unready", origin, reason: check.reason, checkedSecondsAgo },
      { status: 503, headers: { ...headers, "retry-after": String(READY_TTL_MS / 1000) } },
    );
  }
  const { ready: _, ...found } = check;
  return Response.json({ status: "ready", origin, ...found, checkedSecondsAgo }, { headers });
}
