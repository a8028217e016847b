/**
 * The MCP endpoint (`MCP_PATH` for `PROFILE`, and `MCP_PATH/<profile>` for
 * each profile): POST carries JSON-RPC messages, GET opens the server's
 * event stream, DELETE ends a session, OPTIONS is a CORS preflight. A POST
 * body is validated before the origin is called, so malformed input is
 * answered here with a specific error and never costs an origin round trip.
 * Each profile has a tool map of its own.
 */
import type { Context } from "hono";
import type { MessageRecord } from "../analytics/call-record";
import { type CallRecorder, recordCalls } from "../analytics/recorder";
import { callMemberMisspelled } from "../args/recover";
import { rewriteChallenges } from "../auth/protected-resource";
import { signInChallenge } from "../auth/provider";
import { publicUrls } from "../auth/public-url";
import { quotedName } from "../json";
import { logEvent } from "../log";
import {
  addresseeOf,
  type ErrorAddressee,
  ErrorCode,
  errorResponse,
  isRequest,
  unreadAddressee,
} from "../protocol/jsonrpc";
import { alignCallHeaders, paramMismatch, sendsParamHeaders } from "../protocol/mcp-headers";
import { readingRefusal } from "../protocol/request-reading";
import { asksForLaterPage } from "../protocol/tools-list";
import { planForward, type SearchModeLookup } from "../rewrite/request";
import { localAnswer, rewriteResponse } from "../rewrite/response";
import { editsListings } from "../rules/tool-rules";
import type { Profile } from "../schemas/profile";
import { type Caller, callerOf } from "../toolmap/callers";
import { ListingReads } from "../toolmap/relist";
import { toolResolver } from "../toolmap/resolve-tool";
import { ToolMap } from "../toolmap/tool-map";
import { BYTES_DESCRIBED, originRequestHeaders } from "../transport/headers";
import {
  cookiesForClient,
  fetchOrigin,
  logOriginError,
  type OriginReply,
  type OriginRequest,
  redirectRefused,
  relayResponse,
} from "../transport/origin";
import { originTarget, paramOriginUrlSets } from "../transport/origin-target";
import { type ParsedBody, readPostBody } from "../transport/post-body";
import { busyResponse, type Hold } from "../transport/read-bounded";
import type { AppEnv } from "./app-env";

const ALLOWED_METHODS = "GET, POST, DELETE, OPTIONS";

type OriginFailed = Extract<OriginReply, { kind: "failed" }>;
/** Protocol 2026-07-28's stream of server notifications, `tools/list_changed` among them. */
const LISTEN = "subscriptions/listen";

/** The tool map of `profile`, for the caller the origin sees in a request to it. */
async function openToolMap(c: Context<AppEnv>, profile: Profile, caller: Caller): Promise<ToolMap> {
  const config = c.get("config");
  const toolMapMemory = c.get("isolate").toolMaps;
  const scopes = await toolMapMemory.scopesOf(config.originUrl, profile.names);
  return new ToolMap(
    config.toolMapKv,
    scopes,
    profile,
    toolMapMemory,
    (promise) => c.executionCtx.waitUntil(promise),
    config.policy,
    config.deployment,
    caller,
  );
}

/**
 * The proxy's own 4xx for a request it refuses before the origin sees it
 * (docs/errors.md), logged: the client alone reads its answer, and the
 * operator's log would otherwise hold nothing of it. The reason is what the
 * client is told: keys, header and setting names, limits and counts, never a
 * value the body held.
 */
function refused(
  status: number,
  code: number,
  reason: string,
  addressee: ErrorAddressee,
  headers?: HeadersInit,
): Response {
  logEvent("request_refused", { status, code, reason });
  return errorResponse(status, code, reason, addressee, headers);
}

/** The proxy's 502 or 504 for an origin that failed, as what the request's calls and listings got. */
function failed(recorder: CallRecorder | undefined, reply: OriginFailed): Response {
  recorder?.endWith(
    reply.failure === "timeout"
      ? { outcome: "origin_timeout", errorType: String(ErrorCode.OriginTimeout) }
      : { outcome: "origin_unreachable", errorType: String(ErrorCode.OriginUnreachable) },
    reply.response,
  );
  return reply.response;
}

/**
 * What a lone request asks, for the line of an origin's failure to answer it:
 * its method and, for a call, its tool as forwarded (`tool`, the original).
 */
function aboutRequest(body: ParsedBody, tool: string | undefined): OriginRequest["about"] {
  const [message] = body.messages;
  if (body.batch || message === undefined || !isRequest(message)) return undefined;
  return {
    "mcp.method.name": message.method,
    ...(message.method === "tools/call" && tool !== undefined ? { "gen_ai.tool.name": tool } : {}),
  };
}

export async function mcpEndpoint(c: Context<AppEnv>, profile: Profile): Promise<Response> {
  // What the request reads whole (its body, the origin's listings) counts until it is answered.
  const hold = c.get("isolate").reads.hold();
  try {
    return await answer(c, profile, hold);
  } finally {
    hold.release();
  }
}

async function answer(c: Context<AppEnv>, profile: Profile, hold: Hold): Promise<Response> {
  const config = c.get("config");
  const request = c.req.raw;
  const url = new URL(request.url);
  const credentials = c.get("originCredentials");
  // Broker and gate mode: only a request that passed the proxy's token check carries what the
  // origin takes.
  if (credentials.kind === "proxy" && credentials.headers === undefined) {
    return signInChallenge(publicUrls(config, url));
  }
  const unread = unreadAddressee(request.headers);
  const operators = paramOriginUrlSets(config.originUrl, url);
  if (operators !== undefined) {
    return refused(
      400,
      ErrorCode.InvalidRequest,
      `Bad request: the query parameter ${quotedName(operators)} is one the proxy's ORIGIN_URL sets, and a request cannot set it`,
      unread,
    );
  }
  const target = originTarget(config.originUrl, url);
  const headers = originRequestHeaders(request.headers, credentials);
  /** The origin's answer to `sent`, a 5xx of it logged (`origin_error`). */
  const fromOrigin = async (sent: OriginRequest, addressee: ErrorAddressee) => {
    const reply = await fetchOrigin(target, sent, config.originTimeoutMs, addressee);
    if (reply.kind === "answered") logOriginError(reply.response, target, sent);
    return reply;
  };
  const caller = () => callerOf(headers, target, credentials, config.originUrl);
  /** The origin's answer, its sign-in challenges pointing at the proxy's metadata for this URL. */
  const answered = (origin: Response) =>
    rewriteChallenges(
      cookiesForClient(origin, credentials),
      config,
      publicUrls(config, url, url.pathname),
      {
        token: request.headers.has("authorization"),
        session: request.headers.has("mcp-session-id"),
      },
    );

  switch (request.method) {
    case "POST": {
      const started = Date.now();
      const body = await readPostBody(request, config, hold);
      if (body.kind === "busy") return busyResponse("the request's body", unread);
      if (body.kind === "refused") {
        return refused(body.status, body.code, body.message, unread, body.headers);
      }
      // Before the proxy answers anything itself, or brings a header in line with its body.
      const twoWays = readingRefusal(request.headers, body, callMemberMisspelled);
      if (twoWays !== undefined) {
        return refused(400, twoWays.code, twoWays.message, addresseeOf(body));
      }
      const requestCaller = caller();
      const toolMap = await openToolMap(c, profile, requestCaller);
      // The one listing read this request may make: for a call, or for the rest of a first page.
      const reads = new ListingReads(
        target,
        headers,
        config,
        () => toolMap.takeRelist(),
        request.signal,
      );
      /**
       * The origin's whole listing, asked for at most once per request, once a minute per
       * caller and session, and 30 times a minute per isolate and profile (10 per source); whether it
       * answered (or did, for them, within the minute).
       */
      let relisted: Promise<boolean> | undefined;
      /** The origin's `401` to that listing: the caller's credentials no longer pass. */
      let signedOut: Response | undefined;
      const relist = (cause: unknown) => {
        relisted ??= (async () => {
          if (await toolMap.relistedLately()) return true;
          const tools = await reads.read(cause, {
            onUnauthorized: (response) => {
              signedOut = response;
            },
            hold,
          });
          if (!tools) return false;
          await toolMap.relisted(tools);
          return true;
        })();
        return relisted;
      };
      // Search mode's answers come from the caller's own whole listing: one is asked for when
      // this isolate has none.
      const searchMode: SearchModeLookup = async (cause) => {
        const search = await toolMap.search();
        if (search !== undefined) return search ?? undefined;
        if (!(await relist(cause))) return undefined;
        return (await toolMap.search()) ?? undefined;
      };
      // Call analytics (docs/observability.md): one record per call and listing, when bound.
      const records: MessageRecord[] | undefined = config.calls ? [] : undefined;
      const plan = await planForward(
        body,
        toolResolver(toolMap, relist, !body.batch && sendsParamHeaders(request.headers)),
        config.argumentValidation,
        searchMode,
        config.maxLocalAnswerBytes,
        records,
      ).finally(() => toolMap.callsPlanned());
      // An id each for the errors of a batch would be what the limit keeps from being written.
      if (plan.kind === "refused") {
        return refused(400, ErrorCode.InvalidRequest, plan.message, {
          batch: false,
          ids: [],
          revision: body.revision,
        });
      }
      const recorder = await recordCalls(
        config.calls,
        c.get("isolate").analytics,
        {
          profile: profile.name,
          body,
          headers: request.headers,
          started,
          waitUntil: (promise) => c.executionCtx.waitUntil(promise),
          caller: () => requestCaller.pins(),
          source: () => requestCaller.source(),
        },
        records,
      );
      const sent = (response: Response) => {
        recorder?.answered(response);
        return response;
      };
      // Told as a forwarded request would be, so that the client signs in again rather than
      // being told to try a call again that the rules cannot judge without a listing.
      if (signedOut) return sent(answered(signedOut));
      if (plan.body === null) return sent(localAnswer(plan.localResponses, body.batch));
      const param = plan.callHeaders && paramMismatch(request.headers, plan.callHeaders);
      if (param !== undefined) {
        return sent(
          refused(
            400,
            ErrorCode.HeaderMismatch,
            `Header mismatch: the ${param} header does not match the request body`,
            addresseeOf(body),
          ),
        );
      }
      if (plan.callHeaders) alignCallHeaders(headers, plan.callHeaders);
      if (plan.body !== body.bytes) for (const name of BYTES_DESCRIBED) headers.delete(name);
      const addressee = addresseeOf(body);
      // A client that went away while the request was planned (the origin listed for its call,
      // say) has nothing sent on its behalf: a call would run at the origin for no one, and run
      // again when the client sends it anew. No one reads this answer.
      if (request.signal.aborted) {
        return sent(
          errorResponse(
            499,
            ErrorCode.InvalidRequest,
            "Client closed the request before the proxy sent it to the origin",
            addressee,
          ),
        );
      }
      recorder?.callingOrigin();
      const reply = await fromOrigin(
        {
          method: "POST",
          headers,
          body: plan.body,
          clientLeft: request.signal,
          about: aboutRequest(body, plan.callHeaders?.name),
        },
        addressee,
      );
      if (reply.kind === "failed") return failed(recorder, reply);
      const redirected = await redirectRefused(reply.response, target, addressee);
      if (redirected) return sent(redirected);
      if (config.calls) {
        await c
          .get("isolate")
          .analytics.clients.rememberSession(body.messages, reply.response, requestCaller);
      }
      const response = await rewriteResponse(answered(reply.response), {
        listIds: new Set(plan.listRequests.keys()),
        maxListings: config.maxBatchMessages,
        wholeListing: {
          isFirstPage: (id) => {
            const listRequest = plan.listRequests.get(id);
            return listRequest !== undefined && !asksForLaterPage(listRequest);
          },
          readRest: (id, cursor, readInto) =>
            reads.read(plan.listRequests.get(id), { from: cursor, hold: readInto }),
        },
        watchesListChanged: body.messages.some(
          (message) => isRequest(message) && message.method === LISTEN,
        ),
        toolMap,
        addressee,
        localResponses: plan.localResponses,
        reads: c.get("isolate").reads,
        answers: recorder?.answers,
      });
      return sent(response);
    }
    case "GET": {
      const reply = await fromOrigin(
        { method: "GET", headers, body: null, clientLeft: request.signal },
        unread,
      );
      if (reply.kind === "failed") return reply.response;
      const redirected = await redirectRefused(reply.response, target, unread);
      if (redirected) return redirected;
      const toolMap = await openToolMap(c, profile, caller());
      return rewriteResponse(answered(reply.response), {
        // A resumed stream replays responses whose requests this proxy did not see; and on any
        // GET stream, the SDKs' clients take a response for the answer to their request of its
        // id, one the origin answered with 202: where the rules edit listings, it is read so too.
        listIds:
          request.headers.has("last-event-id") || editsListings(toolMap.policy)
            ? "by-shape"
            : new Set(),
        maxListings: config.maxBatchMessages,
        watchesListChanged: true,
        toolMap,
        addressee: unread,
        reads: c.get("isolate").reads,
      });
    }
    case "DELETE":
    case "OPTIONS": {
      const reply = await fromOrigin({ method: request.method, headers, body: null }, unread);
      if (reply.kind === "failed") return reply.response;
      return (
        (await redirectRefused(reply.response, target, unread)) ??
        relayResponse(answered(reply.response))
      );
    }
    default:
      // Not logged: uptime checks probe with HEAD, a line each.
      return errorResponse(
        405,
        ErrorCode.InvalidRequest,
        `Method ${request.method} is not allowed on the MCP endpoint; use ${ALLOWED_METHODS}`,
        unread,
        { Allow: ALLOWED_METHODS },
      );
  }
}
