/**
 * Gate mode's sign-in at the identity provider gone wrong, and at GitHub: an
 * ID token that names another issuer, is signed by another key, carries no
 * nonce or is for another client is refused, and so is a `state` used twice
 * or brought by another browser; no code reaches the client, and nothing
 * reaches the origin. GitHub (OAuth and its user API, played by the test
 * provider under `/github`) lets in the members of `ALLOWED_ORGS`.
 */
import { describe, expect, it } from "vitest";
import {
  connectAs,
  GATE_URL,
  gateNetwork,
  neverShowsItsKeys,
  walkAs,
  walkSignIn,
} from "../helpers/gate";
import { handBuiltClient } from "../helpers/oauth-client";
import { GATEWAY_ORIGIN, IDENTITY_PROVIDER, newTrace, receivedByOrigin } from "../helpers/proxy";

const events = neverShowsItsKeys();

describe("gate mode: an identity provider's answer that proves nothing is refused", () => {
  it.each([
    ["wrong-iss", "id_token_refused"],
    ["bad-signature", "id_token_signature"],
    ["no-nonce", "id_token_refused"],
    ["wrong-audience", "id_token_refused"],
  ])("%s: the client gets server_error and no code", async (fault, reason) => {
    const trace = newTrace();
    const network = gateNetwork({ ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp?trace=${trace}` });
    const walk = (await walkAs(network, "alice", fault)).walk;
    expect(walk.callback?.searchParams.get("error")).toBe("server_error");
    expect(walk.callback?.searchParams.get("code")).toBeNull();
    expect(walk.pages).toEqual([]);
    expect(events("sign_in_failed")).toContainEqual(
      expect.objectContaining({ step: "callback", reason }),
    );
    expect(await receivedByOrigin(trace)).toEqual([]);
  });

  it("asks for a nonce and PKCE, and refuses a state used twice or brought by another browser", async () => {
    const network = gateNetwork();
    const walk = (await walkAs(network, "alice")).walk;
    expect(walk.callback?.searchParams.get("code")).toBeTruthy();
    const atProvider = walk.visited.find((url) => url.origin === IDENTITY_PROVIDER);
    expect(atProvider?.searchParams.get("nonce")).toMatch(/^[\w-]{32,}$/);
    expect(atProvider?.searchParams.get("code_challenge_method")).toBe("S256");
    expect(atProvider?.searchParams.get("scope")).toBe("openid email profile groups");

    // The callback again, as it came back from the provider: its state is spent.
    const callback = walk.visited.find((url) => url.pathname === "/oauth/callback");
    const replayed = await network(callback ?? "", { redirect: "manual" });
    expect(replayed.status).toBe(400);
    expect(replayed.headers.has("location")).toBe(false);
    expect(events("sign_in_failed")).toContainEqual(expect.objectContaining({ reason: "state" }));
  });

  it("sends the client access_denied when the user declines at the provider", async () => {
    const network = gateNetwork();
    const { url } = await handBuiltClient(network, GATE_URL);
    const walk = await walkSignIn(network, url, "approve", {
      // The provider sends the browser back with an error instead of a code.
      visit(at) {
        if (at.origin !== IDENTITY_PROVIDER) return at;
        const back = new URL(at.searchParams.get("redirect_uri") ?? "");
        back.searchParams.set("error", "access_denied");
        back.searchParams.set("state", at.searchParams.get("state") ?? "");
        return back;
      },
    });
    expect(walk.callback?.searchParams.get("error")).toBe("access_denied");
    expect(events("sign_in_denied")).toContainEqual(
      expect.objectContaining({ by: "identity_provider" }),
    );
  });
});

describe("gate mode: an answer to the consent page that is not a form", () => {
  it.each([
    ["JSON", { "content-type": "application/json" }, JSON.stringify({ decision: "approve" })],
    ["no body", {}, undefined],
  ])("%s gets 400 and a page that says so, not a 503", async (_, headers, body) => {
    const network = gateNetwork();
    const { url } = await handBuiltClient(network, GATE_URL);
    const response = await network(url, { method: "POST", headers, body });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("was not a form");
    expect(events("sign_in_failed")).not.toContainEqual(
      expect.objectContaining({ step: "approval" }),
    );
  });
});

describe("gate mode with GitHub", () => {
  const github = {
    IDP_PROTOCOL: "github",
    IDP_ISSUER: `${IDENTITY_PROVIDER}/github`,
    ALLOWED_DOMAINS: undefined,
    ALLOWED_GROUPS: undefined,
    ALLOWED_ORGS: "acme-corp",
  };

  it("lets in a member of an allowed organization; the SDK client lists and calls tools", async () => {
    const signed = await connectAs("alice", gateNetwork(github));
    expect((await signed.client.listTools()).length).toBeGreaterThan(0);
    await signed.client.close();
    expect(events("sign_in_completed")).toContainEqual(expect.objectContaining({ by: "org" }));
  });

  it("asks GitHub for the organizations, and refuses a user in none of them", async () => {
    const network = gateNetwork(github);
    const walk = (await walkAs(network, "bob")).walk;
    const atGitHub = walk.visited.find((url) => url.origin === IDENTITY_PROVIDER);
    expect(atGitHub?.pathname).toBe("/github/login/oauth/authorize");
    expect(atGitHub?.searchParams.get("scope")).toBe("read:user user:email read:org");
    expect(walk.stopped?.status).toBe(403);
    expect(walk.stopped?.html).toContain("bob@other.test may not use");
  });

  it("follows no redirect of GitHub's API: the user's token goes nowhere else, and the sign-in fails", async () => {
    const walk = (await walkAs(gateNetwork(github), "rudy")).walk;
    expect(walk.callback?.searchParams.get("error")).toBe("server_error");
    expect(walk.callback?.searchParams.get("code")).toBeNull();
    const followed = await (await fetch(`${IDENTITY_PROVIDER}/__redirected`)).json();
    expect(followed).toEqual([]);
  });

  it("lets in a user by their primary email, only when GitHub says it is verified", async () => {
    const byEmail = {
      ...github,
      ALLOWED_ORGS: undefined,
      ALLOWED_USERS: "carol@acme.test, dave@partner.test",
    };
    const network = gateNetwork(byEmail);
    const refused = (await walkAs(network, "carol")).walk;
    expect(refused.stopped?.status).toBe(403);
    const allowed = (await walkAs(network, "dave")).walk;
    expect(allowed.callback?.searchParams.get("code")).toBeTruthy();
  });
});
