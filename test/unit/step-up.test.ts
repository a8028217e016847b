import { describe, expect, it } from "vitest";
import { MAX_ORIGIN_SCOPES, MAX_SCOPE_LENGTH, namedScopes } from "../../src/auth/scope-tokens";
import {
  askedOriginScopes,
  grantedAtOrigin,
  stepUpChallenge,
  stepUpScopes,
  withheldAtOrigin,
  withoutWithheld,
} from "../../src/auth/step-up";

const urls = {
  mcp: "https://proxy.example/mcp",
  metadata: "https://proxy.example/.well-known/oauth-protected-resource/mcp",
};

/** `count` scopes of the origin's, `s0`, `s1`, … */
const scopes = (count: number, prefix = "") =>
  Array.from({ length: count }, (_, i) => `${prefix}s${i}`);

describe("the origin's scopes a client asks the proxy for", () => {
  it("are those written origin:<scope>, unprefixed and each once; a client's own grant nothing", () => {
    expect(
      askedOriginScopes(["profile", "origin:files:write", "offline_access", "origin:files:write"]),
    ).toEqual(["files:write"]);
    expect(askedOriginScopes([])).toEqual([]);
  });

  it("are refused whole for one that is no RFC 6749 scope token, or too long, or too many of them", () => {
    for (const bad of ["origin:", 'origin:a"b', "origin:a\\b", "origin:é", "origin:a\tb"]) {
      expect(askedOriginScopes(["origin:files:read", bad])).toBeUndefined();
    }
    const longest = "x".repeat(MAX_SCOPE_LENGTH);
    expect(askedOriginScopes([`origin:${longest}`])).toEqual([longest]);
    expect(askedOriginScopes([`origin:${longest}x`])).toBeUndefined();
    expect(askedOriginScopes(scopes(MAX_ORIGIN_SCOPES, "origin:"))).toHaveLength(MAX_ORIGIN_SCOPES);
    expect(askedOriginScopes(scopes(MAX_ORIGIN_SCOPES + 1, "origin:"))).toBeUndefined();
  });
});

describe("the scopes the proxy's challenge names for the origin's insufficient_scope", () => {
  it("are the grant's origin: scopes, then those the origin names, as the proxy's, each once", () => {
    expect(
      stepUpScopes(
        ["profile", "origin:files:read", "origin:files:write"],
        "files:write files:admin",
      ),
    ).toEqual(["origin:files:read", "origin:files:write", "origin:files:admin"]);
    expect(stepUpScopes([], "files:write")).toEqual(["origin:files:write"]);
  });

  it("leave out what the origin writes that is no scope token the proxy carries, and are none where nothing is left", () => {
    const long = "x".repeat(MAX_SCOPE_LENGTH + 1);
    expect(stepUpScopes([], `a"b  ${long} files:write é`)).toEqual(["origin:files:write"]);
    expect(stepUpScopes(["origin:files:read"], `${long} é`)).toBeUndefined();
    expect(stepUpScopes(["origin:files:read"], "")).toBeUndefined();
    expect(stepUpScopes(["origin:files:read"], undefined)).toBeUndefined();
  });

  it("are at most MAX_ORIGIN_SCOPES, the origin's first: an origin's challenges cannot grow a grant without bound", () => {
    const held = scopes(MAX_ORIGIN_SCOPES, "origin:held-");
    const named = stepUpScopes(held, scopes(MAX_ORIGIN_SCOPES * 4).join(" "));
    expect(named).toEqual(scopes(MAX_ORIGIN_SCOPES, "origin:"));
    const some = stepUpScopes(held, "files:write");
    expect(some).toHaveLength(MAX_ORIGIN_SCOPES);
    expect(some?.at(-1)).toBe("origin:files:write");
  });

  it("go out as the proxy's own 403, naming its metadata", async () => {
    const response = stepUpChallenge(urls, ["origin:files:read", "origin:files:write"]);
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toBe(
      `Bearer realm="OAuth", error="insufficient_scope", scope="origin:files:read origin:files:write", resource_metadata="${urls.metadata}", error_description="The origin needs permissions this sign-in lacks; sign in again for the scopes named"`,
    );
    expect(await response.json()).toMatchObject({ error: "insufficient_scope" });
  });
});

describe("the origin's scopes a token of the proxy's names", () => {
  it("are those of the grant's the origin's token answer granted, none of what else it names", () => {
    const carried = ["files:write", "files:admin"];
    expect(grantedAtOrigin(carried, "mcp:tools files:write other")).toEqual(["files:write"]);
    expect(grantedAtOrigin(carried, "")).toEqual([]);
    expect(grantedAtOrigin(carried, "files:writer files:admin2")).toEqual([]);
    expect(withheldAtOrigin(carried, ["files:write"])).toEqual(["files:admin"]);
  });

  it("are those asked where the answer names no scope (RFC 6749 §5.1)", () => {
    expect(grantedAtOrigin(["files:write"], undefined)).toBeUndefined();
    expect(withheldAtOrigin(["files:write"], undefined)).toEqual([]);
    const asked = ["profile", "origin:files:write", "origin:files:admin"];
    expect(withoutWithheld(asked, undefined)).toEqual(asked);
  });

  it("leave out only the origin's scopes it did not grant: the client's own stay", () => {
    const asked = ["profile", "origin:files:write", "origin:files:admin", "offline_access"];
    expect(withoutWithheld(asked, ["files:admin"])).toEqual([
      "profile",
      "origin:files:admin",
      "offline_access",
    ]);
    expect(withoutWithheld(asked, [])).toEqual(["profile", "offline_access"]);
  });
});

describe("the scopes npm run client names from a server's insufficient_scope", () => {
  it("are every scope the proxy's challenge names, an origin scope of MAX_SCOPE_LENGTH among them", () => {
    const longest = "x".repeat(MAX_SCOPE_LENGTH);
    const named = stepUpScopes(["origin:files:read"], `files:write ${longest}`) ?? [];
    expect(named).toContain(`origin:${longest}`);
    expect(namedScopes(named.join(" "))).toEqual(named);
    expect(
      namedScopes(stepUpScopes([], scopes(MAX_ORIGIN_SCOPES * 2).join(" "))?.join(" ")),
    ).toEqual(scopes(MAX_ORIGIN_SCOPES, "origin:"));
  });

  it("leave out what is no scope token, or longer than the proxy carries, and are at most MAX_ORIGIN_SCOPES", () => {
    const longest = "x".repeat(MAX_SCOPE_LENGTH);
    expect(
      namedScopes(`${longest} ${longest}x origin:${longest}x origin: a"b é  files:write`),
    ).toEqual([longest, "files:write"]);
    expect(namedScopes(scopes(MAX_ORIGIN_SCOPES + 1).join(" "))).toEqual(scopes(MAX_ORIGIN_SCOPES));
    expect(namedScopes(undefined)).toEqual([]);
  });
});
