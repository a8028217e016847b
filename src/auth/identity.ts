/**
 * Who signed in at the identity provider, as gate mode keeps it, and who may
 * connect (`ALLOWED_USERS`, `ALLOWED_DOMAINS`, `ALLOWED_GROUPS`,
 * `ALLOWED_ORGS`: any match lets a user in; none set is a configuration
 * error, config/gate.ts). The proxy asks the provider only at sign-in, so a grant
 * carries the identity the provider vouched for, and the lists are checked
 * against it at sign-in, at every refresh and on every request: a user
 * removed from them is refused from the next request on, whatever the
 * provider says later.
 */
import { type AllowLists, isDomainName, isPlainAddress, lowerAscii } from "../config";
import { sha256 } from "../digest";
import { isPlainObject } from "../json";

/** What gate mode's grants hold of a user: only what the provider vouched for. */
export interface Identity {
  /** The provider's issuer (`IDP_ISSUER`): grants of another provider are not this one's users. */
  issuer: string;
  /** The provider's stable identifier for the user (`sub`; GitHub's user id). */
  subject: string;
  /** The user's email address, lower case; only when the provider says it is verified. */
  email?: string;
  /** The values of `IDP_GROUPS_CLAIM`, as the provider wrote them. */
  groups: string[];
  /** GitHub: the organizations the user belongs to, lower case. */
  orgs: string[];
}

/** How many groups or organizations a grant keeps, and how long each may be. */
export const MAX_MEMBERSHIPS = 256;
export const MAX_MEMBERSHIP_CHARS = 256;

/** A claim's memberships: strings (or one string), at most `MAX_MEMBERSHIPS`; anything else none. */
export function memberships(value: unknown, lower = false): string[] {
  const values = typeof value === "string" ? [value] : Array.isArray(value) ? value : [];
  return values
    .filter((item): item is string => typeof item === "string")
    .filter((item) => item.length > 0 && item.length <= MAX_MEMBERSHIP_CHARS)
    .slice(0, MAX_MEMBERSHIPS)
    .map((item) => (lower ? lowerAscii(item) : item));
}

/** Why a user may connect, or why not. */
export type Admission =
  | { kind: "allowed"; by: "user" | "domain" | "group" | "org" }
  | { kind: "refused"; reason: "unverified_email" | "unpassable_email" | "not_listed" };

/**
 * The domain of `email`: what follows its last `@`, when that is a domain
 * name (the only kind `ALLOWED_DOMAINS` holds, and the only part of an
 * address a log line names).
 */
export function domainOf(email: string | undefined): string | undefined {
  const domain = email?.slice(email.lastIndexOf("@") + 1);
  return domain !== undefined && isDomainName(domain) ? domain : undefined;
}

/**
 * Whether `identity` may connect under `allowed`. `needsEmail`: the origin
 * is told who each user is (`ORIGIN_USER_HEADER`), so a user it could not be
 * told is refused whatever list lets them in: with no verified email, the
 * origin would take them for no one, or for the key's owner; with one that
 * is not a plain address (config/gate.ts `isPlainAddress`), for someone else.
 * Read here, at sign-in and on every request and refresh, so a grant made
 * before the setting (or before this check) sends no such address either.
 */
export function admission(allowed: AllowLists, identity: Identity, needsEmail = false): Admission {
  const { email } = identity;
  if (needsEmail && email === undefined) return { kind: "refused", reason: "unverified_email" };
  if (needsEmail && email !== undefined && !isPlainAddress(email))
    return { kind: "refused", reason: "unpassable_email" };
  if (email !== undefined && allowed.users.has(email)) return { kind: "allowed", by: "user" };
  const domain = domainOf(email);
  if (domain !== undefined && allowed.domains.has(domain)) return { kind: "allowed", by: "domain" };
  if (identity.groups.some((group) => allowed.groups.has(group)))
    return { kind: "allowed", by: "group" };
  if (identity.orgs.some((org) => allowed.orgs.has(org))) return { kind: "allowed", by: "org" };
  const byEmail = allowed.users.size > 0 || allowed.domains.size > 0;
  return {
    kind: "refused",
    reason: email === undefined && byEmail ? "unverified_email" : "not_listed",
  };
}

/** A grant's identity, when `value` is one (what the grant's props hold). */
export function identityOf(value: unknown): Identity | undefined {
  if (!isPlainObject(value)) return undefined;
  const { issuer, subject, email } = value;
  if (typeof issuer !== "string" || typeof subject !== "string") return undefined;
  return {
    issuer,
    subject,
    ...(typeof email === "string" ? { email } : {}),
    groups: memberships(value.groups),
    orgs: memberships(value.orgs, true),
  };
}

/** The library's user ID for `identity`: no email or name in the proxy's tokens and keys. */
export function userIdOf(identity: Identity): Promise<string> {
  return sha256(`${identity.issuer}\n${identity.subject}`);
}
