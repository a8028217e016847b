/**
 * What one section of wrangler.toml binds that another binds too: a KV
 * namespace (by id), a rate limit (by `namespace_id`, which counts per
 * account), a Durable Object namespace (a Worker's class) or a Secrets Store
 * secret. Two tenants' Workers then read and count the same data. Read from the file as written,
 * as wrangler reads it (a section inherits no binding); which sharing does
 * harm is `npm run check`'s to say (scripts/check.ts, `sharedFinding`).
 */
import type { Unstable_RawConfig, Unstable_RawEnvironment } from "wrangler";

/** A KV id `npm run tenant -- add` writes before the namespace exists. */
export const PLACEHOLDER_ID = "00000000000000000000000000000000";

export type SharedBinding = {
  /** The binding in this section (`OAUTH_KV`), and its path in the file (`env.acme.kv_namespaces[OAUTH_KV].id`). */
  binding: string;
  path: string;
  /** The other section, the binding it has of the same thing, and that one's path. */
  other: string;
  otherBinding: string;
  otherPath: string;
  /** The other section's ORIGIN_URL as its vars write it; `undefined` where it is a declared secret or unset. */
  otherOrigin: string | undefined;
} & Resource;

/** What a binding is bound to: a Durable Object namespace is a Worker's class. */
type Resource =
  | { kind: "kv" | "rate limit" | "secret" }
  | { kind: "durable object"; script: string; className: string };

type Bound = Resource & {
  binding: string;
  path: string;
  /** What it is, whichever section binds it: the same text is the same thing. */
  resource: string;
};

/** Section `name`'s Worker as wrangler names it: its `name`, or the top level's, `-NAME`. */
export const workerOf = (raw: Unstable_RawConfig, name: string) =>
  raw.env?.[name]?.name ?? `${raw.name}-${name}`;

/** A rate limit's `namespace_id` as the account counts it: a number, `"07001"` the same as 7001. */
const namespaceIdOf = (id: unknown) =>
  String(id)
    .trim()
    .replace(/^0+(?=\d)/, "");

/** What section `name` of the file `raw` binds, each with what it is. */
function boundBy(raw: Unstable_RawConfig, name: string, section: Unstable_RawEnvironment) {
  const at = `env.${name}`;
  const bound: Bound[] = [];
  for (const { binding, id } of section.kv_namespaces ?? []) {
    // A namespace not created yet is none: each section gets its own at `kv namespace create`.
    if (id === undefined || id === PLACEHOLDER_ID) continue;
    bound.push({
      binding,
      path: `${at}.kv_namespaces[${binding}].id`,
      kind: "kv",
      resource: `kv ${id}`,
    });
  }
  for (const { name: binding, namespace_id } of section.ratelimits ?? []) {
    bound.push({
      binding,
      path: `${at}.ratelimits[${binding}].namespace_id`,
      kind: "rate limit",
      resource: `rate limit ${namespaceIdOf(namespace_id)}`,
    });
  }
  // A class of the section's own Worker, unless script_name names another's.
  const worker = workerOf(raw, name);
  for (const { name: binding, class_name, script_name, environment } of section.durable_objects
    ?.bindings ?? []) {
    const script = `${script_name ?? worker}${environment === undefined ? "" : ` (${environment})`}`;
    bound.push({
      binding,
      path: `${at}.durable_objects.bindings[${binding}]`,
      kind: "durable object",
      resource: `durable object ${script}\n${class_name}`,
      script,
      className: class_name,
    });
  }
  for (const { binding, store_id, secret_name } of section.secrets_store_secrets ?? []) {
    bound.push({
      binding,
      path: `${at}.secrets_store_secrets[${binding}]`,
      kind: "secret",
      resource: `secret ${store_id}\n${secret_name}`,
    });
  }
  return bound;
}

/**
 * What section `name` binds that another section binds too, each pair once
 * per binding of theirs; the top level, which is never deployed, aside.
 */
export function sharedBindings(raw: Unstable_RawConfig, name: string): SharedBinding[] {
  const sections = raw.env ?? {};
  const own = sections[name];
  if (own === undefined) return [];
  const shared: SharedBinding[] = [];
  const others = Object.entries(sections).filter(([other]) => other !== name);
  for (const mine of boundBy(raw, name, own)) {
    for (const [other, section] of others) {
      const origin = section.vars?.ORIGIN_URL;
      const declared = section.secrets?.required?.includes("ORIGIN_URL") ?? false;
      for (const theirs of boundBy(raw, other, section)) {
        if (theirs.resource !== mine.resource) continue;
        const { resource: _, ...binding } = mine;
        shared.push({
          ...binding,
          other,
          otherBinding: theirs.binding,
          otherPath: theirs.path,
          otherOrigin: typeof origin === "string" && !declared ? origin : undefined,
        });
      }
    }
  }
  return shared;
}
