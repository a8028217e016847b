/**
 * `GrantRefreshes`, an isolate's memory of broker mode's refreshes: which
 * requests a refresh at the origin answers, and which make another. The
 * refreshes at the origin are played by `spend`; test/e2e/broker-refresh.test.ts
 * drives the same through the proxy.
 */
import { describe, expect, it, vi } from "vitest";
import { GrantRefreshes, type RefreshOutcome } from "../../src/auth/grant-refresh";
import type { UpstreamTokens } from "../../src/auth/upstream-tokens";

/** The authorization server that refreshes them. */
const ISSUER = "https://auth.example/";
/** When the tokens here expire: an hour after the file was loaded. */
const LATER = Date.now() + 3_600_000;
const tokens = (n: number, expiresAt = LATER): UpstreamTokens => ({
  accessToken: `access-${n}`,
  refreshToken: `refresh-${n}`,
  expiresAt,
});

/** A refresh at the origin the test answers: what it was given, and how many were made. */
function origin() {
  const given: UpstreamTokens[] = [];
  let answer: (outcome: RefreshOutcome) => void = () => {};
  let asked: () => void = () => {};
  const wasAsked = new Promise<void>((resolve) => {
    asked = resolve;
  });
  const spend = (held: UpstreamTokens) => {
    given.push(held);
    asked();
    return new Promise<RefreshOutcome>((resolve) => {
      answer = resolve;
    });
  };
  return { given, spend, wasAsked, answer: (outcome: RefreshOutcome) => answer(outcome) };
}

/** A refresh at the origin that answers at once with `outcome`. */
function answering(outcome: RefreshOutcome) {
  const given: UpstreamTokens[] = [];
  return {
    given,
    spend: async (held: UpstreamTokens) => {
      given.push(held);
      return outcome;
    },
  };
}

describe("GrantRefreshes.successorOf", () => {
  it("gives a grant's earlier access token the tokens its refresh got, while usable, and no other token any", async () => {
    const refreshes = new GrantRefreshes();
    expect(await refreshes.successorOf("user:grant", "access-0")).toBeUndefined();
    const refreshed: RefreshOutcome = { kind: "refreshed", tokens: tokens(1), issuer: ISSUER };
    await refreshes.refresh("user:grant", tokens(0), answering(refreshed).spend);

    expect(await refreshes.successorOf("user:grant", "access-0")).toEqual(tokens(1));
    // Another grant whose props hold the same origin token (given twice by its authorization server).
    expect(await refreshes.successorOf("other:grant", "access-0")).toBeUndefined();
    expect(await refreshes.successorOf("user:grant", "access-1")).toBeUndefined();
    expect(await refreshes.successorOf("user:grant", "access-9")).toBeUndefined();
    // The origin refused what the refresh got: it stands for nothing any more.
    await refreshes.refused("access-1");
    expect(await refreshes.successorOf("user:grant", "access-0")).toBeUndefined();
  });

  it("makes no digest once the minute after the isolate's last refresh is over", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const refreshes = new GrantRefreshes();
      const refreshed: RefreshOutcome = { kind: "refreshed", tokens: tokens(1), issuer: ISSUER };
      await refreshes.refresh("user:grant", tokens(0), answering(refreshed).spend);
      vi.setSystemTime(Date.now() + 61_000);
      const digest = vi.spyOn(crypto.subtle, "digest");
      // Every call of the grant from now on, with the token the refresh got.
      expect(await refreshes.successorOf("user:grant", "access-1")).toBeUndefined();
      expect(await refreshes.successorOf("user:grant", "access-1")).toBeUndefined();
      expect(digest).not.toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
      vi.restoreAllMocks();
    }
  });

  it("gives none that expired", async () => {
    const refreshes = new GrantRefreshes();
    const expired: RefreshOutcome = { kind: "refreshed", tokens: tokens(1, 0), issuer: ISSUER };
    await refreshes.refresh("user:grant", tokens(0), answering(expired).spend);
    expect(await refreshes.successorOf("user:grant", "access-0")).toBeUndefined();
  });
});

describe("GrantRefreshes", () => {
  it("gives a failure to the requests that waited on it, and tries again for one that came after", async () => {
    const refreshes = new GrantRefreshes();
    const down = origin();
    const waiting = [1, 2, 3].map(() =>
      refreshes.inLine("user:grant", () => refreshes.refresh("user:grant", tokens(0), down.spend)),
    );
    await down.wasAsked;
    down.answer({ kind: "failed", reason: "unreachable" });
    const answers = await Promise.all(waiting);
    expect(answers).toEqual([
      { outcome: { kind: "failed", reason: "unreachable" }, shared: false },
      { outcome: { kind: "failed", reason: "unreachable" }, shared: true },
      { outcome: { kind: "failed", reason: "unreachable" }, shared: true },
    ]);
    expect(down.given).toHaveLength(1);

    const back = answering({ kind: "refreshed", issuer: ISSUER, tokens: tokens(1) });
    const later = await refreshes.inLine("user:grant", () =>
      refreshes.refresh("user:grant", tokens(0), back.spend),
    );
    expect(later).toEqual({
      outcome: { kind: "refreshed", issuer: ISSUER, tokens: tokens(1) },
      shared: false,
    });
    expect(back.given).toEqual([tokens(0)]);
  });

  it("answers a request holding the spent token, or the one got, with what the refresh got", async () => {
    const refreshes = new GrantRefreshes();
    const got = tokens(1);
    const first = answering({ kind: "refreshed", issuer: ISSUER, tokens: got });
    await refreshes.refresh("user:grant", tokens(0), first.spend);
    const again = answering({ kind: "refreshed", issuer: ISSUER, tokens: tokens(2) });
    const stale = await refreshes.refresh("user:grant", tokens(0), again.spend);
    const fresh = await refreshes.refresh("user:grant", got, again.spend);
    expect(stale).toEqual({
      outcome: { kind: "refreshed", issuer: ISSUER, tokens: got },
      shared: true,
    });
    expect(fresh).toEqual({
      outcome: { kind: "refreshed", issuer: ISSUER, tokens: got },
      shared: true,
    });
    expect(again.given).toEqual([]);
    // Another grant's refresh is its own.
    await refreshes.refresh("user:other", tokens(0), again.spend);
    expect(again.given).toEqual([tokens(0)]);
  });

  it("refreshes what a refresh got once the origin refused it, never the token it spent", async () => {
    const refreshes = new GrantRefreshes();
    const got = tokens(1);
    await refreshes.refresh(
      "user:grant",
      tokens(0),
      answering({ kind: "refreshed", issuer: ISSUER, tokens: got }).spend,
    );
    await refreshes.refused(got.accessToken);
    const next = answering({ kind: "refreshed", issuer: ISSUER, tokens: tokens(2) });
    const answer = await refreshes.refresh("user:grant", tokens(0), next.spend);
    expect(next.given).toEqual([got]);
    expect(answer).toEqual({
      outcome: { kind: "refreshed", issuer: ISSUER, tokens: tokens(2) },
      shared: false,
    });
  });

  it("refreshes what a refresh got once it expired", async () => {
    const refreshes = new GrantRefreshes();
    const expired = tokens(1, Date.now() - 1);
    await refreshes.refresh(
      "user:grant",
      tokens(0),
      answering({ kind: "refreshed", issuer: ISSUER, tokens: expired }).spend,
    );
    const next = answering({ kind: "refreshed", issuer: ISSUER, tokens: tokens(2) });
    await refreshes.refresh("user:grant", expired, next.spend);
    expect(next.given).toEqual([expired]);
  });

  it("lets a request go on past one before it that never finishes (a request the runtime stopped)", async () => {
    const refreshes = new GrantRefreshes(0);
    void refreshes.inLine("user:grant", () => new Promise<never>(() => {}));
    expect(await refreshes.inLine("user:grant", async () => "answered")).toBe("answered");
    // Nor does a refresh in flight that never settles hold the next one.
    void refreshes.refresh("user:grant", tokens(0), () => new Promise<never>(() => {}));
    const next = answering({ kind: "refreshed", issuer: ISSUER, tokens: tokens(1) });
    const answer = await refreshes.refresh("user:grant", tokens(0), next.spend);
    expect(answer).toEqual({
      outcome: { kind: "refreshed", issuer: ISSUER, tokens: tokens(1) },
      shared: false,
    });
  });

  it("takes requests in line that never finish (the runtime stopped them) for gone once they ran as long as one may: the grant's line is not full for good", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const refreshes = new GrantRefreshes(0);
      // A client's refreshes, one per call in flight, whose client left while the authorization
      // server hung: the runtime stopped them 30 s after, and they never leave the line.
      for (let i = 0; i < 32; i++) {
        void refreshes.inLine("user:grant", () => new Promise<never>(() => {}));
      }
      // While they may still be running, they fill the line: the client tries again later.
      expect(await refreshes.inLine("user:grant", async () => "answered")).toBe("full");
      vi.setSystemTime(Date.now() + 30_000);
      expect(await refreshes.inLine("user:grant", async () => "answered")).toBe("answered");
    } finally {
      vi.useRealTimers();
    }
  });

  it("makes a request that came around the line wait for the refresh in flight, and take its result", async () => {
    const refreshes = new GrantRefreshes();
    const slow = origin();
    const first = refreshes.refresh("user:grant", tokens(0), slow.spend);
    await slow.wasAsked;
    const second = refreshes.refresh("user:grant", tokens(0), slow.spend);
    slow.answer({ kind: "refreshed", issuer: ISSUER, tokens: tokens(1) });
    expect(await first).toMatchObject({ shared: false });
    expect(await second).toEqual({
      outcome: { kind: "refreshed", issuer: ISSUER, tokens: tokens(1) },
      shared: true,
    });
    expect(slow.given).toHaveLength(1);
  });
});
