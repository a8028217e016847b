/**
 * What one isolate remembers of sign-in between requests, each with its
 * bound (the "Bounded" rule of ARCHITECTURE.md, "Invariants"): per origin, the metadata location
 * its challenges named and its protected-resource document; the
 * authorization servers discovered for it; the proxy's registrations at them;
 * what it saw of the day's budget of sign-in writes; broker mode's
 * refreshes of grants (grant-refresh.ts); gate mode's identity providers and
 * the origin's keys it read (origin-key.ts).
 */
import type * as oauth from "oauth4webapi";
import { BoundedMap } from "../bounded-map";
import { GrantRefreshes } from "./grant-refresh";
import { BudgetMemory } from "./sign-in-budget";

const MAX_ORIGINS = 16;
/** How long an isolate reuses the origin's metadata document. */
export const METADATA_TTL_MS = 60_000;
/** How long an isolate reuses a discovered authorization server. */
const DISCOVERY_TTL_MS = 5 * 60_000;
/** How many of the origin's keys an isolate keeps (the shared one, and users' own), and how long. */
const MAX_ORIGIN_KEYS = 1000;
export const ORIGIN_KEY_TTL_MS = 60_000;

export interface Discovery {
  as: oauth.AuthorizationServer;
  /** The origin's own resource URL, which its tokens are bound to. */
  resource: string;
  scope: string[];
}

export class SignInMemory {
  /**
   * Per origin URL: the metadata URL the origin's challenge to the proxy's own request with no
   * credentials named (on its host); `null`, it named none. Never what a client's request drew
   * (protected-resource.ts). Kept as long as the document: an origin that moves or first
   * publishes its document is read again within the minute.
   */
  readonly advertised = new BoundedMap<string, string | null>(MAX_ORIGINS, METADATA_TTL_MS);
  /**
   * Per origin URL: its protected-resource metadata document; `null`, none published (every
   * location a 4xx but 429, or no document), so that a client's requests for it cost the origin
   * three requests a minute, not three each (a 5xx or a 429 is not kept).
   */
  readonly metadata = new BoundedMap<string, Record<string, unknown> | null>(
    MAX_ORIGINS,
    METADATA_TTL_MS,
  );
  /** Per origin URL: its authorization server and resource. */
  readonly discoveries = new BoundedMap<string, Discovery>(MAX_ORIGINS, DISCOVERY_TTL_MS);
  /** Per authorization server and proxy origin: the proxy's client ID there. */
  readonly registrations = new BoundedMap<string, string>(MAX_ORIGINS);
  /** Gate mode, per issuer: the identity provider's metadata (and, on it, oauth4webapi's JWKS cache). */
  readonly identityProviders = new BoundedMap<string, oauth.AuthorizationServer>(
    MAX_ORIGINS,
    DISCOVERY_TTL_MS,
  );
  /** Gate mode: the origin's keys as read from where they are kept; `null`, a user who has none. */
  readonly originKeys = new BoundedMap<string, string | null>(MAX_ORIGIN_KEYS, ORIGIN_KEY_TTL_MS);
  /** Today's counts of sign-in writes, as last seen (one day's); `now` is the budget's clock. */
  readonly budget: BudgetMemory;

  /** Per grant: its token requests in line, and its last refresh at the origin (1,000 grants, a minute). */
  readonly refreshes = new GrantRefreshes();

  constructor(now?: () => number) {
    this.budget = new BudgetMemory(now);
  }
}
