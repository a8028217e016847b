/**
 * Gate mode's credential at the origin: the header `ORIGIN_AUTH_HEADER`
 * with `ORIGIN_AUTH_VALUE`, its `{secret}` replaced by the user's own key
 * (`ORIGIN_USER_SECRETS`, by verified email) or, for a user without one, the
 * shared `ORIGIN_SECRET` (a Worker secret, or a Secrets Store binding). A
 * user with no key of their own and no shared key has none: they are refused
 * at sign-in, and on every request. A key that cannot be read (KV or the
 * Secrets Store down) is a failure, never a reason to use another user's or
 * the shared one.
 *
 * Keys are read when a request needs them and kept a minute per isolate
 * (`SignInMemory.originKeys`), so a changed or removed key takes effect
 * within a minute, and KV's own delay (up to 60 s between locations). They
 * are never logged: what fails is told by the setting's name.
 */
import { type GateAuth, isHeaderSafe } from "../config";
import { logEvent } from "../log";
import type { Identity } from "./identity";
import type { SignInMemory } from "./sign-in-memory";

export type OriginKey =
  /**
   * The header to set, by lower-case name, and its value; `shared`: the
   * shared `ORIGIN_SECRET`, every user's without a key of their own.
   */
  | { kind: "found"; header: string; value: string; shared: boolean }
  /** This user has no key, and there is no shared one. */
  | { kind: "none" }
  /** Where the key is kept could not be read, or holds no usable key: `setting` names it. */
  | { kind: "failed"; setting: "ORIGIN_SECRET" | "ORIGIN_USER_SECRETS" };

const SHARED = "shared";

class KeyError extends Error {
  constructor(
    readonly setting: "ORIGIN_SECRET" | "ORIGIN_USER_SECRETS",
    readonly reason: string,
  ) {
    super(`${setting}: ${reason}`);
  }
}

/** The text of a key read at request time, held to what a header value may be. */
function usable(text: string | null, setting: KeyError["setting"]): string | null {
  if (text === null) return null;
  const key = text.trim();
  if (!isHeaderSafe(key)) throw new KeyError(setting, "not printable ASCII text");
  return key;
}

/** `read` once a minute per isolate: what it gave, `null` for no key. */
async function remembered(
  memory: SignInMemory,
  name: string,
  read: () => Promise<string | null>,
): Promise<string | null> {
  const known = memory.originKeys.get(name);
  if (known !== undefined) return known;
  const key = await read();
  memory.originKeys.set(name, key);
  return key;
}

async function userKey(
  auth: GateAuth,
  email: string | undefined,
  memory: SignInMemory,
): Promise<string | null> {
  const secrets = auth.userSecrets;
  if (secrets === undefined || email === undefined) return null;
  if (secrets.kind === "map") return secrets.map.get(email) ?? null;
  return remembered(memory, `user:${email}`, async () => {
    const text = await secrets.kv.get(email).catch((error: unknown) => {
      throw new KeyError("ORIGIN_USER_SECRETS", error instanceof Error ? error.message : "failed");
    });
    return usable(text, "ORIGIN_USER_SECRETS");
  });
}

async function sharedKey(auth: GateAuth, memory: SignInMemory): Promise<string | null> {
  const secret = auth.originSecret;
  if (secret === undefined) return null;
  if (secret.kind === "text") return secret.text;
  return remembered(memory, SHARED, async () => {
    const text = await secret.store.get().catch((error: unknown) => {
      throw new KeyError("ORIGIN_SECRET", error instanceof Error ? error.message : "failed");
    });
    return usable(text, "ORIGIN_SECRET");
  });
}

/** The credential the origin gets for `identity`'s requests. */
export async function originKeyFor(
  auth: GateAuth,
  identity: Identity,
  memory: SignInMemory,
): Promise<OriginKey> {
  try {
    const own = await userKey(auth, identity.email, memory);
    const key = own ?? (await sharedKey(auth, memory));
    if (key === null) return { kind: "none" };
    const { header, prefix, suffix } = auth.originAuth;
    return { kind: "found", header, value: `${prefix}${key}${suffix}`, shared: own === null };
  } catch (error) {
    if (!(error instanceof KeyError)) throw error;
    logEvent("origin_key_unavailable", { setting: error.setting, reason: error.reason });
    return { kind: "failed", setting: error.setting };
  }
}
