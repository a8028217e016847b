import { GATE_SETTINGS, type GateVars, gateAuthOf } from "./gate";

export const VALIDATION_MODES = ["off", "warn", "enforce"] as const;
export type ValidationMode = (typeof VALIDATION_MODES)[number];

export const AUTH_MODES = ["relay", "broker", "gate"] as const;

/**
 * `SIGN_IN_DAILY_WRITES`' default: a quarter of the Free plan's 1,000 KV
 * writes a day, so a flood of sign-ins leaves the rest to the tool map,
 * grants and refreshes (docs/sign-in.md, "What sign-in costs").
 */
export const SIGN_IN_DAILY_WRITES = 250;
/** One sign-in with a registration: the registration, the consent page and the Allow. */
export const MIN_SIGN_IN_DAILY_WRITES = 3;

/** `SIGN_IN_BUDGET`: the Durable Object namespace that counts sign-in writes (auth/sign-in-budget.ts). */
export type SignInBudgetBinding = NonNullable<Env["SIGN_IN_BUDGET"]>;

/** What the modes in which the proxy signs clients in itself (broker, gate) both need. */
export interface SignInBindings {
  /** `OAUTH_KV`: grants, the proxy's tokens (as hashes), sign-ins, the proxy's upstream client. */
  oauthKv: KVNamespace;
  /** `SIGN_IN_RATE_LIMIT`: sign-in requests per client address (auth/sign-in-limit.ts). */
  signInRateLimit: RateLimit;
  /** `SIGN_IN_BUDGET`: what counts the deployment's sign-in writes per UTC day. */
  signInBudget: SignInBudgetBinding;
  /** `SIGN_IN_DAILY_WRITES`: how many sign-in writes a UTC day allows, before anyone signed in. */
  signInDailyWrites: number;
  /** `PASS_HEADERS`: the client's headers the origin gets besides MCP's and the content's, lower case. */
  passHeaders: ReadonlySet<string>;
}

/** How clients sign in to an origin that needs it (docs/sign-in.md). */
export type AuthMode =
  | { mode: "relay" }
  | (SignInBindings & {
      mode: "broker";
      /**
       * `UPSTREAM_ISSUER`: the only authorization server the proxy signs in
       * at, whatever the origin's metadata names; `undefined`: the one it names.
       */
      upstreamIssuer: URL | undefined;
      /** The proxy's own client at the origin's authorization server, when the operator registered one. */
      upstreamClient: { id: string; secret: string | undefined } | undefined;
    })
  | GateAuth;

/** What broker mode has that relay mode does not. */
export type BrokerAuth = Extract<AuthMode, { mode: "broker" }>;
/** The modes in which the proxy is the authorization server for its own URL. */
export type SignInAuth = Exclude<AuthMode, { mode: "relay" }>;

/** An identity provider the proxy signs users in at. */
export interface IdentityProvider {
  /** `IDP_PROTOCOL`: OpenID Connect, or GitHub's OAuth and user API. */
  protocol: "oidc" | "github";
  /** `IDP_ISSUER`: the OpenID Connect issuer; for GitHub, its web host (github.com, or an Enterprise Server). */
  issuer: URL;
  /** `IDP_CLIENT_ID`, `IDP_CLIENT_SECRET`: the proxy's client there. */
  clientId: string;
  clientSecret: string | undefined;
  /** `IDP_GROUPS_CLAIM`: the ID token claim that lists the user's groups. */
  groupsClaim: string;
}

/** Who may connect: a user any list names is let in. All lower case, but groups (as the provider writes them). */
export interface AllowLists {
  users: ReadonlySet<string>;
  domains: ReadonlySet<string>;
  groups: ReadonlySet<string>;
  orgs: ReadonlySet<string>;
}

/** A secret: the Worker secret's text, or a Secrets Store binding, read when it is needed. */
export type SecretSource =
  | { kind: "text"; text: string }
  | { kind: "store"; store: SecretsStoreSecret };

/** Per-user keys by verified email (lower case): a KV namespace, or a map a Worker secret holds as JSON. */
export type UserSecrets =
  | { kind: "kv"; kv: KVNamespace }
  | { kind: "map"; map: ReadonlyMap<string, string> };

export interface GateAuth extends SignInBindings {
  mode: "gate";
  idp: IdentityProvider;
  allowed: AllowLists;
  /** `ORIGIN_AUTH_HEADER` (lower case) and `ORIGIN_AUTH_VALUE` around its `{secret}`. */
  originAuth: { header: string; prefix: string; suffix: string };
  /** `ORIGIN_SECRET`: the origin's key, for every user without one of their own. */
  originSecret: SecretSource | undefined;
  /** `ORIGIN_USER_SECRETS`: keys of their own for some users. */
  userSecrets: UserSecrets | undefined;
  /** `ORIGIN_USER_HEADER` (lower case): where the origin is told the user's verified email. */
  userHeader: string | undefined;
  /** `SIGN_IN_MAX_AGE_HOURS`, in seconds: how long a grant lasts before the user signs in again. */
  signInMaxAgeS: number;
}

/** `AUTH_MODE` with what its mode needs, from settings the checks above passed. */
export function authOf(
  vars: GateVars & {
    OAUTH_KV?: KVNamespace;
    SIGN_IN_RATE_LIMIT?: RateLimit;
    SIGN_IN_BUDGET?: SignInBudgetBinding;
    SIGN_IN_DAILY_WRITES: number;
    UPSTREAM_ISSUER?: URL;
    UPSTREAM_CLIENT_ID?: string;
    UPSTREAM_CLIENT_SECRET?: string;
  },
): AuthMode {
  if (
    vars.AUTH_MODE === "relay" ||
    !vars.OAUTH_KV ||
    !vars.SIGN_IN_RATE_LIMIT ||
    !vars.SIGN_IN_BUDGET
  )
    return { mode: "relay" };
  const bindings: SignInBindings = {
    oauthKv: vars.OAUTH_KV,
    signInRateLimit: vars.SIGN_IN_RATE_LIMIT,
    signInBudget: vars.SIGN_IN_BUDGET,
    signInDailyWrites: vars.SIGN_IN_DAILY_WRITES,
    passHeaders: vars.PASS_HEADERS,
  };
  if (vars.AUTH_MODE === "gate") return gateAuthOf(vars, bindings);
  return {
    ...bindings,
    mode: "broker",
    upstreamIssuer: vars.UPSTREAM_ISSUER,
    upstreamClient: vars.UPSTREAM_CLIENT_ID
      ? { id: vars.UPSTREAM_CLIENT_ID, secret: vars.UPSTREAM_CLIENT_SECRET }
      : undefined,
  };
}

/** The bindings broker and gate mode sign clients in with, and what to do where one is missing. */
export const SIGN_IN_BINDINGS = [
  ["OAUTH_KV", "bind a KV namespace as OAUTH_KV"],
  ["SIGN_IN_RATE_LIMIT", "add a [[ratelimits]] binding named SIGN_IN_RATE_LIMIT"],
  ["SIGN_IN_BUDGET", "bind the Durable Object class SignInBudget as SIGN_IN_BUDGET"],
] as const;

/** What only sign-in reads (broker and gate mode): its bindings, and its daily budget of writes. */
export const SIGN_IN_ONLY: readonly string[] = [
  "SIGN_IN_DAILY_WRITES",
  ...SIGN_IN_BINDINGS.map(([binding]) => binding),
];

/**
 * The settings and bindings only some modes read, with those modes. Set in
 * another mode, one would do nothing: gate mode set up with `AUTH_MODE =
 * "gate"` left out is a relay that anyone may reach, and a broker tenant's
 * sign-in bindings left in relay mode are a sign-in that is not there.
 */
export const MODE_SETTINGS: ReadonlyArray<[settings: readonly string[], modes: readonly string[]]> =
  [
    [["UPSTREAM_ISSUER", "UPSTREAM_CLIENT_ID", "UPSTREAM_CLIENT_SECRET"], ["broker"]],
    [
      ["PASS_HEADERS", ...SIGN_IN_ONLY],
      ["broker", "gate"],
    ],
    [Object.keys(GATE_SETTINGS), ["gate"]],
  ];
