import { describe, expect, it } from "vitest";
import { approvedOf, keptForConsent, wasShown } from "../../src/auth/consent-shown";

const request = {
  responseType: "code",
  clientId: "c1",
  redirectUri: "http://127.0.0.1:5173/cb",
  scope: ["read"],
  state: "s",
};
const access = {
  originHost: "mcp.acme.example",
  originScopes: [],
  signInHost: "login.acme.example",
  signInIssuer: "https://login.acme.example/",
};
/** A request as the consent transaction keeps it: JSON, as workers-oauth-provider stores it. */
const keptAndRead = (kept: object) => JSON.parse(JSON.stringify(kept));

describe("where the consent page showed the user signs in", () => {
  it("is kept with the request, and the request given back as the client sent it", () => {
    const { request: approved, shown } = approvedOf(keptAndRead(keptForConsent(request, access)));
    expect(approved).toEqual(request);
    expect(wasShown(shown, access)).toBe(true);
  });

  it("matches no other server: another issuer, or another host for the same one", () => {
    const { shown } = approvedOf(keptAndRead(keptForConsent(request, access)));
    expect(wasShown(shown, { ...access, signInIssuer: "https://evil.example/" })).toBe(false);
    expect(wasShown(shown, { ...access, signInHost: "evil.example" })).toBe(false);
  });

  it("matches none where a page kept nothing, or something else", () => {
    expect(wasShown(approvedOf(request).shown, access)).toBe(false);
    const odd = { ...request, edgeRewriterShownSignIn: "login.acme.example" };
    expect(approvedOf(odd)).toEqual({ request });
  });
});
