/**
 * One refresh of the origin's token per grant at a time (broker mode).
 *
 * A client making parallel calls when the origin's token expired gets the
 * proxy's `401` on each, and refreshes the proxy's token once per call, all
 * with the same refresh token. Behind an authorization server that rotates
 * refresh tokens (each works once: Auth0, Okta) only the first refresh of
 * the origin's token works; the others get `invalid_grant`, which the library
 * (workers-oauth-provider) takes for a revoked sign-in, and revokes the grant.
 * And the library answers each refresh of one grant from the grant as it
 * read it, then writes it back whole: the last writer wins, and the proxy's
 * refresh token any other answer gave is dead. So, in an isolate:
 *
 * - A grant's token requests are answered one after another (`inLine`), each
 *   from the grant the one before wrote. The client keeps the last answer it
 *   got, which is the last written: its refresh token works.
 * - A grant's last refresh at the origin is remembered for a minute
 *   (`refresh`): a request whose grant holds the token it spent, or the one
 *   it got, is given what it got, with no second refresh at the origin (unless
 *   the origin refused it since, or it expired); a failure is given to the
 *   requests that were waiting while it ran, so an authorization server that
 *   hangs costs them one timeout, not one each.
 *
 * Across isolates the runtime offers no lock: KV has no compare-and-set, and
 * a Durable Object would be one more binding for every broker tenant.
 * Instead a refresh announces itself in `OAUTH_KV` before it spends the
 * origin's refresh token (`announceRefresh`), and an `invalid_grant` is taken
 * for a revocation only when no other refresh of that grant spent that token
 * within the minute (`spentElsewhere`). The library's own API cannot say
 * whether another request just refreshed a grant (its summary of a grant has
 * no revision, and its props open only with the client's token, inside its
 * own refresh), and a lease would only make the loser wait, then fail anyway:
 * the library answers it from the grant as it read it, before the winner
 * wrote. The loser's client gets `503` and `Retry-After`, and its retry reads
 * the grant the winner wrote.
 */
import { BoundedMap } from "../bounded-map";
import { sha256 } from "../digest";
import { logEvent } from "../log";
import { WAIT_UNTIL_MS } from "../wait-until";
import type { UpstreamTokens } from "./upstream-tokens";

/** Grants an isolate lines up token requests for, and remembers the last refresh of. */
const MAX_GRANTS = 1_000;
/** Token requests one grant may have waiting (a client sends one per call in flight); past it: retry. */
const MAX_WAITING = 32;
/** How long a refresh's result answers requests that hold what it spent or got: a burst of parallel calls. */
const LAST_REFRESH_MS = 60_000;
/** How long the origin's refusal of a token keeps it from being handed out as a refresh's result. */
const REFUSED_MS = 10 * 60_000;
/** Refresh tokens a grant's last refresh answers for: the one it spent, and those its predecessors spent. */
const MAX_SPENT = 4;
/**
 * The longest a token request waits for the one before it, or for a refresh
 * in flight: past it, it goes on. The request before is kept running if its
 * client leaves (broker.ts hands it to `waitUntil`), but the runtime stops
 * even that after a while, and a request it stopped never says it is done.
 */
const MAX_WAIT_MS = 60_000;

const INTENT_PREFIX = "edge-rewriter:refresh:";
/** KV's shortest expiration: an announced refresh is news for a minute. */
const INTENT_TTL_S = 60;

/** What a refresh of the origin's token came to. */
export type RefreshOutcome =
  /** `issuer`: the authorization server that refreshed them. */
  | { kind: "refreshed"; tokens: UpstreamTokens; issuer: string }
  /** The authorization server could not be reached, or answered with another error: it may work later. */
  | { kind: "failed"; reason: string; status?: number; detail?: string }
  /** `invalid_grant` for a refresh token another isolate's refresh spent within the minute. */
  | { kind: "spent" }
  /** `invalid_grant`, and no other refresh spent the token: the sign-in is gone. */
  | { kind: "revoked" };

interface Line {
  /** Settles when the last request in line is answered. */
  tail: Promise<void>;
  /** When each request in line (by ticket) came into it. */
  entered: Map<number, number>;
  /** The ticket of the request being answered. */
  current?: number;
}

interface LastRefresh {
  /** Digests of the refresh tokens it (and the refreshes it followed) spent. */
  spent: string[];
  /** Until it settles. */
  pending?: Promise<RefreshOutcome>;
  outcome?: RefreshOutcome;
  /** Digest of the access token it got. */
  got?: string;
  /** Tickets handed out when it settled: a request holding one of them waited while it ran. */
  settled: number;
}

const digestOf = (token: string | undefined) =>
  token === undefined ? Promise.resolve(undefined) : sha256(token);

/** Settles when `promise` does, or after `ms`, whichever is first. */
async function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([promise.then(noop, noop), waited]);
  clearTimeout(timer);
}

function noop() {}

/** What an isolate knows of the refreshes of its grants; bounded (`MAX_GRANTS`, a minute each). */
export class GrantRefreshes {
  private readonly lines = new BoundedMap<string, Line>(MAX_GRANTS);
  private readonly last = new BoundedMap<string, LastRefresh>(MAX_GRANTS, LAST_REFRESH_MS);
  private readonly refusedTokens = new BoundedMap<string, true>(MAX_GRANTS, REFUSED_MS);
  /**
   * Each refresh's tokens, by its grant and the digest of the access token
   * they replaced in it, for a minute (`successorOf`).
   */
  private readonly successors = new BoundedMap<string, { tokens: UpstreamTokens; got: string }>(
    MAX_GRANTS,
    LAST_REFRESH_MS,
  );
  /**
   * Until when `successors` may hold one: its size counts an expired entry
   * until that entry's own key is read, which no later call may do.
   */
  private successorsUntil = 0;
  private tickets = 0;

  constructor(private readonly maxWaitMs = MAX_WAIT_MS) {}

  /**
   * `answer` once every token request for `grant` that came before it is
   * answered; `"full"`, unanswered, when `MAX_WAITING` already wait.
   */
  async inLine<T>(grant: string, answer: () => Promise<T>): Promise<T | "full"> {
    let line = this.lines.get(grant);
    if (!line) {
      line = { tail: Promise.resolve(), entered: new Map() };
      this.lines.set(grant, line);
    }
    const now = Date.now();
    // A request the runtime stopped in line never leaves it: one in line longer than it may wait
    // and `WAIT_UNTIL_MS` more no longer counts, or a grant that many requests were stopped in (its
    // authorization server hanging, its clients gone) would be answered "try again" for the
    // isolate's life. One that was not stopped lets one more request in line meanwhile.
    for (const [ticket, at] of line.entered) {
      if (now - at >= this.maxWaitMs + WAIT_UNTIL_MS) line.entered.delete(ticket);
    }
    if (line.entered.size >= MAX_WAITING) return "full";
    const ticket = ++this.tickets;
    line.entered.set(ticket, now);
    const before = line.tail;
    let done = () => {};
    line.tail = new Promise((resolve) => {
      done = resolve;
    });
    await waitAtMost(before, this.maxWaitMs);
    line.current = ticket;
    try {
      return await answer();
    } finally {
      line.current = undefined;
      line.entered.delete(ticket);
      done();
      if (line.entered.size === 0 && this.lines.get(grant) === line) this.lines.delete(grant);
    }
  }

  /**
   * The origin's fresh tokens for `grant`, whose props hold `tokens`: from
   * its last refresh in this isolate when that answers for them (`shared`),
   * else from `spend`, which spends the refresh token it is given.
   */
  async refresh(
    grant: string,
    tokens: UpstreamTokens,
    spend: (tokens: UpstreamTokens) => Promise<RefreshOutcome>,
  ): Promise<{ outcome: RefreshOutcome; shared: boolean }> {
    const ticket = this.lines.get(grant)?.current ?? Number.POSITIVE_INFINITY;
    let last = this.last.get(grant);
    if (last?.pending) {
      // A request that did not come through the line: still one refresh at a time.
      await waitAtMost(last.pending, this.maxWaitMs);
      last = this.last.get(grant);
    }
    let current = tokens;
    const [spends, holds] = await Promise.all([
      digestOf(tokens.refreshToken),
      sha256(tokens.accessToken),
    ]);
    const answers =
      last?.outcome !== undefined &&
      ((spends !== undefined && last.spent.includes(spends)) || last.got === holds);
    if (answers && last?.outcome) {
      if (last.outcome.kind !== "refreshed") {
        if (ticket <= last.settled) return { outcome: last.outcome, shared: true };
      } else if (this.usable(last.outcome.tokens, last.got)) {
        return { outcome: last.outcome, shared: true };
      } else {
        // What it got is refused or expired: refresh that, never the token it spent.
        current = last.outcome.tokens;
      }
    }
    const [spent, replaced] = await Promise.all([
      digestOf(current.refreshToken),
      current === tokens ? holds : sha256(current.accessToken),
    ]);
    const earlier = last?.outcome?.kind === "refreshed" ? last.spent : [];
    const pending = spend(current).catch(
      (error: unknown): RefreshOutcome => ({
        kind: "failed",
        reason: "error",
        detail: String(error),
      }),
    );
    const entry: LastRefresh = {
      spent: [...(spent === undefined ? [] : [spent]), ...earlier].slice(0, MAX_SPENT),
      pending,
      settled: Number.POSITIVE_INFINITY,
    };
    this.last.set(grant, entry);
    const outcome = await pending;
    entry.outcome = outcome;
    entry.pending = undefined;
    entry.settled = this.tickets;
    if (outcome.kind === "refreshed") {
      entry.got = await sha256(outcome.tokens.accessToken);
      this.successors.set(`${grant} ${replaced}`, { tokens: outcome.tokens, got: entry.got });
      this.successorsUntil = Date.now() + LAST_REFRESH_MS;
    }
    return { outcome, shared: false };
  }

  /**
   * The tokens that replaced `accessToken` in `grant` at the grant's last
   * refresh in this isolate, within the minute, while the origin has not
   * refused them and they have not expired. A request its client sent with
   * the proxy's token from before that refresh (parallel calls, one of which
   * refreshed) goes on with them: a `401` for it would come after its client's
   * refresh was answered, and the 1.x SDK's transport takes that for a
   * refresh that did not work, and fails the call (docs/sign-in.md,
   * "Refreshes"). Only that grant finds them: the grant is part of the key,
   * as another grant's props may hold the same origin token (an
   * authorization server that gave one token twice).
   */
  async successorOf(grant: string, accessToken: string): Promise<UpstreamTokens | undefined> {
    // As a rule no refresh in the last minute: no digest to make.
    if (Date.now() >= this.successorsUntil) return undefined;
    const next = this.successors.get(`${grant} ${await sha256(accessToken)}`);
    return next && this.usable(next.tokens, next.got) ? next.tokens : undefined;
  }

  /** The origin refused `accessToken`: a refresh that got it answers no one with it again. */
  async refused(accessToken: string): Promise<void> {
    this.refusedTokens.set(await sha256(accessToken), true);
  }

  private usable(tokens: UpstreamTokens, got: string | undefined): boolean {
    if (got === undefined || this.refusedTokens.get(got)) return false;
    return tokens.expiresAt === undefined || tokens.expiresAt > Date.now();
  }
}

/** Where a refresh of `grant` spending `refreshToken` is announced: no token in the key, only a digest. */
async function intentPrefix(grant: string, refreshToken: string): Promise<string> {
  return `${INTENT_PREFIX}${await sha256(`${grant}\n${refreshToken}`)}:`;
}

/**
 * Announces, before the origin's refresh token is spent, that refresh
 * `flight` of `grant` spends it. A failed write is logged: the refresh goes
 * on, as it did before announcements.
 */
export async function announceRefresh(
  kv: KVNamespace,
  grant: string,
  refreshToken: string,
  flight: string,
): Promise<void> {
  const key = `${await intentPrefix(grant, refreshToken)}${flight}`;
  await kv
    .put(key, "", { expirationTtl: INTENT_TTL_S })
    .catch((error) =>
      logEvent("kv_error", { op: "put", what: "refresh_intent", error: String(error) }),
    );
}

/**
 * Whether a refresh other than `flight` announced it spends `refreshToken`
 * for `grant` within the minute. When KV cannot tell, `true`: a grant kept
 * by mistake costs a retry, one revoked by mistake a sign-in.
 */
export async function spentElsewhere(
  kv: KVNamespace,
  grant: string,
  refreshToken: string,
  flight: string,
): Promise<boolean> {
  const prefix = await intentPrefix(grant, refreshToken);
  try {
    const { keys } = await kv.list({ prefix, limit: MAX_WAITING });
    return keys.some((key) => key.name !== `${prefix}${flight}`);
  } catch (error) {
    logEvent("kv_error", { op: "list", what: "refresh_intent", error: String(error) });
    return true;
  }
}
