/**
 * Broker mode's bindings in local development and tests, as a broker tenant
 * of wrangler.toml binds them (`[env.acme-broker]`): wrangler.toml's top level
 * is relay mode, and a binding there that a tenant lacks is one wrangler warns
 * about for every tenant. Miniflare's worker options.
 */
export const BROKER_BINDINGS = {
  kvNamespaces: { OAUTH_KV: "local-oauth" },
  ratelimits: {
    SIGN_IN_RATE_LIMIT: { namespace_id: "7001", simple: { limit: 30, period: 60 as const } },
  },
  durableObjects: { SIGN_IN_BUDGET: { className: "SignInBudget", useSQLite: true } },
};
