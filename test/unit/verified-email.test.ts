/**
 * Which address an OpenID Connect provider's ID token vouches for, as gate
 * mode reads it (src/auth/idp-oidc.ts, docs/sign-in.md "Who may connect"):
 * only one the provider verified and still answers for.
 */
import type { IDToken } from "oauth4webapi";
import { describe, expect, it } from "vitest";
import { verifiedEmail } from "../../src/auth/idp-oidc";

const GOOGLE = new URL("https://accounts.google.com");
const OKTA = new URL("https://acme.okta.com/oauth2/default");
const ENTRA = new URL("https://login.microsoftonline.com/tenant-id/v2.0");

const token = (claims: Record<string, unknown>): IDToken => ({
  iss: "https://issuer.example",
  sub: "subject",
  aud: "client",
  iat: 0,
  exp: 0,
  ...claims,
});

describe("the address an ID token vouches for", () => {
  it("at Google: one of a Workspace account (hd) or a Gmail address, never another a consumer account was made with", () => {
    // A Google account made with a work address: verified once, when it was made, and kept by
    // whoever made it, though the mailbox is gone (an employee who left).
    expect(verifiedEmail(token({ email: "mallory@acme.com", email_verified: true }), GOOGLE)).toBe(
      undefined,
    );
    expect(
      verifiedEmail(
        token({ email: "Alice@Acme.com", email_verified: true, hd: "acme.com" }),
        GOOGLE,
      ),
    ).toBe("alice@acme.com");
    expect(verifiedEmail(token({ email: "bob@gmail.com", email_verified: true }), GOOGLE)).toBe(
      "bob@gmail.com",
    );
    expect(
      verifiedEmail(
        token({ email: "alice@acme.com", email_verified: false, hd: "acme.com" }),
        GOOGLE,
      ),
    ).toBe(undefined);
    // Google's rule, not the domain's: hd names a Workspace organization, whatever the address.
    expect(
      verifiedEmail(token({ email: "bob@gmail.com.evil.example", email_verified: true }), GOOGLE),
    ).toBe(undefined);
  });

  it("at other providers: as email_verified says, or Entra ID's xms_edov without it", () => {
    expect(verifiedEmail(token({ email: "alice@acme.com", email_verified: true }), OKTA)).toBe(
      "alice@acme.com",
    );
    expect(verifiedEmail(token({ email: "alice@acme.com" }), OKTA)).toBe(undefined);
    expect(verifiedEmail(token({ email: "alice@acme.com", xms_edov: true }), ENTRA)).toBe(
      "alice@acme.com",
    );
  });
});
