/**
 * Broker mode's daily budget of sign-in writes (docs/sign-in.md, "What
 * sign-in costs"). Before anyone has signed in at the origin, a client can
 * make the proxy write to `OAUTH_KV` three ways: a registration
 * (`/oauth/register`), a consent page (`GET /authorize`) and an Allow
 * (`POST /authorize`). `SIGN_IN_RATE_LIMIT` bounds them per address and
 * minute; this bounds them for the whole deployment and UTC day, the period
 * of the Free plan's 1,000 KV writes, so that no flood of sign-ins can spend
 * the writes the tool map, grants and refreshes need. Past it, new sign-ins
 * wait for 00:00 UTC; clients already signed in are not touched.
 *
 * Registrations may take half of the day's budget at most: a flood of them,
 * the cheapest of the three (one POST, no browser), still leaves clients with
 * a Client ID Metadata Document, or a registration from an earlier day, the
 * other half.
 *
 * The counter is the `SIGN_IN_BUDGET` Durable Object, one object per UTC day
 * (sign-in-budget-object.ts): a Rate Limiting binding counts per Cloudflare
 * location and over 10 or 60 seconds only, a KV counter would cost a write
 * per count and miss concurrent ones (KV has no compare-and-swap and is
 * eventually consistent), and an isolate's own count is not the
 * deployment's. A Durable Object counts exactly, once for all locations, for
 * a Durable Object request per counted write (the Free plan includes 100,000
 * a day). Once an isolate has seen a kind of write spent for the day, it
 * refuses it without asking the object again. When the object cannot be
 * reached, the write is refused: counting nothing would let a flood through
 * to KV.
 */
import type { SignInBindings } from "../config";
import { logEvent } from "../log";

/** The writes a client makes before anyone signed in at the origin. */
export type SignInWrite = "registration" | "consent" | "approval";

/** One UTC day's counts: every write, and registrations among them. */
export interface WriteCounts {
  all: number;
  registrations: number;
}

export const NO_WRITES: WriteCounts = { all: 0, registrations: 0 };

const DAY_MS = 86_400_000;
/** How long a client waits when the budget could not be counted. */
const UNAVAILABLE_RETRY_S = 60;

/** The counts with one more `write`, or `undefined` when `budget` leaves it no room. */
export function counted(
  counts: WriteCounts,
  write: SignInWrite,
  budget: number,
): WriteCounts | undefined {
  if (counts.all >= budget) return undefined;
  if (write !== "registration") return { ...counts, all: counts.all + 1 };
  if (counts.registrations >= Math.floor(budget / 2)) return undefined;
  return { all: counts.all + 1, registrations: counts.registrations + 1 };
}

/** A day's number since the epoch, and the object that counts it, by its date. */
export const dayOf = (now: number) => Math.floor(now / DAY_MS);
export const dayName = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);
/** When an object's day is over for every clock that may still name it: it then deletes itself. */
export const forgetAt = (day: number) => (day + 2) * DAY_MS;

/** What one isolate knows of today's counts, and its clock (tests set one). */
export class BudgetMemory {
  private seen: { day: number; counts: WriteCounts } | undefined;

  constructor(readonly now: () => number = Date.now) {}

  /** The counts this isolate last saw for `day`; none for another day. */
  countsOf(day: number): WriteCounts | undefined {
    return this.seen?.day === day ? this.seen.counts : undefined;
  }

  /** Keeps what the object answered: counts only grow within a day, whatever order answers arrive in. */
  saw(day: number, counts: WriteCounts): void {
    const known = this.countsOf(day) ?? NO_WRITES;
    this.seen = {
      day,
      counts: {
        all: Math.max(known.all, counts.all),
        registrations: Math.max(known.registrations, counts.registrations),
      },
    };
  }
}

/** Why a write was refused, and how many seconds until asking again is worth it. */
export interface BudgetRefusal {
  reason: "spent" | "unavailable";
  retryAfter: number;
}

/**
 * Counts one `write` against the day's budget: `undefined` when it may go
 * ahead (it is counted), the refusal otherwise.
 */
export async function takeSignInWrite(
  auth: SignInBindings,
  memory: BudgetMemory,
  write: SignInWrite,
): Promise<BudgetRefusal | undefined> {
  const now = memory.now();
  const day = dayOf(now);
  const budget = auth.signInDailyWrites;
  const spent = (): BudgetRefusal => {
    logEvent("sign_in_budget_spent", { write, budget });
    return { reason: "spent", retryAfter: Math.ceil(((day + 1) * DAY_MS - now) / 1000) };
  };
  const known = memory.countsOf(day);
  if (known && counted(known, write, budget) === undefined) return spent();
  let taken: { taken: boolean; counts: WriteCounts };
  try {
    taken = await auth.signInBudget.getByName(dayName(day)).take(write, budget, day);
  } catch (error) {
    logEvent("sign_in_budget_unavailable", {
      write,
      error: error instanceof Error ? error.message : String(error),
    });
    return { reason: "unavailable", retryAfter: UNAVAILABLE_RETRY_S };
  }
  memory.saw(day, taken.counts);
  return taken.taken ? undefined : spent();
}

/** What a client is told when its write is refused: an OAuth error description. */
export function refusalText(refusal: BudgetRefusal, write: SignInWrite): string {
  if (refusal.reason === "unavailable") {
    return "The server cannot start new sign-ins just now; try again in a minute";
  }
  return write === "registration"
    ? "The server takes no more new client registrations today; try again after 00:00 UTC, or identify with a Client ID Metadata Document, which needs none"
    : "The server takes no more new sign-ins today; try again after 00:00 UTC. Apps already signed in keep working";
}

/**
 * The registration endpoint's refusal, as workers-oauth-provider's
 * `clientRegistrationCallback` returns it: RFC 6749's
 * `temporarily_unavailable`, `503`, with the seconds to wait, which
 * `registrationRefused` turns into `Retry-After`.
 */
export function registrationRefusal(refusal: BudgetRefusal) {
  return {
    code: "temporarily_unavailable",
    description: refusalText(refusal, "registration"),
    status: 503,
    retryAfter: refusal.retryAfter,
  };
}

/**
 * The response for a registration the budget refused, from what the library
 * hands its `onError` hook: the callback's refusal comes back as `detail`.
 * `undefined` for any other error.
 */
export function registrationRefused(
  internal: { reason: string; detail?: unknown },
  headers: Record<string, string>,
): Response | undefined {
  const detail = internal.detail as Partial<ReturnType<typeof registrationRefusal>> | undefined;
  if (internal.reason !== "callback_denied" || typeof detail?.retryAfter !== "number") {
    return undefined;
  }
  return Response.json(
    { error: detail.code, error_description: detail.description },
    { status: detail.status, headers: { ...headers, "retry-after": String(detail.retryAfter) } },
  );
}
