import { describe, expect, it } from "vitest";
import { ALLOW_SCRIPT } from "../../src/auth/consent-gesture";
import { CONSENT_POLICY, consentPage, shownName } from "../../src/auth/consent-page";

const details = {
  clientId: "c1",
  clientName: "Desk",
  redirectUri: "http://127.0.0.1:5173/cb",
  redirectHost: "127.0.0.1",
  redirectIsLoopback: true,
  scope: ["read"],
};
/** The page without its own script: what is left came from the page's text. */
const withoutOwnScript = (page: string) => page.replace(`<script>${ALLOW_SCRIPT}</script>`, "");

const access = {
  originHost: "mcp.acme.example",
  originScopes: ["files:read", "read"],
  signInHost: "login.acme.example",
  signInIssuer: "https://login.acme.example/",
};

describe("the consent page", () => {
  it("names the client, where access goes, the origin and the permissions, with Allow and Deny", () => {
    const page = consentPage(details, "h1", access);
    expect(page).toContain(
      '<h1>Allow <span id="client-name">Desk</span> to use the MCP server at mcp.acme.example as you?</h1>',
    );
    expect(page).toContain("This app registered itself: its name is not verified.");
    expect(page).toContain('<strong id="redirect-host">127.0.0.1</strong>');
    expect(page).toContain("This sends access to an app on your computer.");
    expect(page).toContain("With these permissions: <code>files:read</code> <code>read</code>.");
    // Allow leads to the authorization server's page, not the MCP server's: named by its issuer,
    // whose own host that page is on, so there is nothing more to say of it.
    expect(page).toContain(
      'If you allow it, you sign in next with <strong id="sign-in-issuer">https://login.acme.example/</strong>.',
    );
    expect(page).not.toContain("sign-in-host");
    expect(page).toContain('<input type="hidden" name="handle" value="h1">');
    expect(page).toContain('<button name="decision" value="deny">Deny</button>');
  });

  it("holds Allow off until its one script sees a gesture, and says what to do without JavaScript", () => {
    const page = consentPage(details, "h1", access);
    expect(page).toContain(
      '<button id="allow" name="decision" value="approve" disabled>Allow</button>',
    );
    expect(page).toContain("Allow turns on once this page has been in front for a moment");
    expect(page).toContain('<noscript><p class="note">Allow needs JavaScript');
    expect(page.split("<script").length - 1).toBe(1);
    expect(withoutOwnScript(page)).not.toContain("<script");
  });

  it("allows the page's script by its SHA-256 and nothing else beyond the pages' policy", async () => {
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(ALLOW_SCRIPT));
    const hash = btoa(String.fromCharCode(...new Uint8Array(digest)));
    expect(CONSENT_POLICY).toBe(
      `default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; script-src 'sha256-${hash}'`,
    );
  });

  it("shows a Client ID Metadata Document client's domain, and no warning for a remote redirect", () => {
    const page = consentPage(
      {
        ...details,
        clientDomain: "app.example",
        redirectHost: "app.example",
        redirectIsLoopback: false,
      },
      "h1",
      access,
    );
    expect(page).toContain("Published by <strong>app.example</strong>.");
    expect(page).not.toContain("an app on your computer");
  });

  it("escapes everything that came from the client", () => {
    const page = consentPage(
      { ...details, clientName: '"><script>x</script>', redirectHost: "<b>", scope: ["<i>"] },
      '"handle',
      access,
    );
    expect(withoutOwnScript(page)).not.toMatch(/<script>|<b>|<i>/);
    expect(page).toContain("&#34;&#62;&#60;script&#62;x&#60;/script&#62;");
    expect(page).toContain('value="&#34;handle"');
  });

  it("escapes everything that came from the origin: its host, the scopes it asks for, where sign-in goes", () => {
    // The origin's metadata names its scopes and its authorization server: the origin chose them.
    const page = consentPage(details, "h1", {
      originHost: "<u>o",
      originScopes: ['read"><script>s</script>', "a&b"],
      signInHost: "<img src=x onerror=alert(1)>",
      signInIssuer: 'https://login.acme.example/"><b>',
    });
    expect(withoutOwnScript(page)).not.toMatch(/<script>|<u>|<img|<b>/);
    expect(page).toContain("at &#60;u&#62;o as you?</h1>");
    expect(page).toContain(
      "With these permissions: <code>read&#34;&#62;&#60;script&#62;s&#60;/script&#62;</code> <code>a&#38;b</code>.",
    );
    expect(page).toContain(
      'you sign in next with <strong id="sign-in-issuer">https://login.acme.example/&#34;&#62;&#60;b&#62;</strong>.',
    );
    expect(page).toContain(
      'on another host, <strong id="sign-in-host">&#60;img src=x onerror=alert(1)&#62;</strong>:',
    );
  });

  it("lists the origin's scopes the app asks for apart from its metadata's, as the app's, escaped", () => {
    // broker mode: a client that the proxy's 403 told to ask for `origin:<scope>` (auth/step-up.ts).
    const page = consentPage(details, "h1", { ...access, askedScopes: ["files:write", "<b>"] });
    expect(page).toContain("With these permissions: <code>files:read</code> <code>read</code>.");
    expect(page).toContain(
      "The app asks for these permissions at mcp.acme.example too: <code>files:write</code> <code>&#60;b&#62;</code>. The server you sign in with next says what they allow.",
    );
    expect(consentPage(details, "h1", access)).not.toContain("The app asks for");
  });

  it("names the server the sign-in is handed to, and says so plainly where its sign-in page is on another host", () => {
    // An origin (without UPSTREAM_ISSUER) names its own server, whose metadata puts the sign-in
    // page on a host users trust: the code that page gives goes to the server's own token endpoint.
    const page = consentPage(details, "h1", {
      ...access,
      signInHost: "accounts.google.com",
      signInIssuer: "https://auth.evil.example/",
    });
    expect(page).toContain(
      'If you allow it, you sign in next with <strong id="sign-in-issuer">https://auth.evil.example/</strong>.',
    );
    expect(page).toContain(
      '<p class="note">Its sign-in page is on another host, <strong id="sign-in-host">accounts.google.com</strong>: what you allow there is handed to https://auth.evil.example/, not to accounts.google.com. Allow only if you trust https://auth.evil.example/.</p>',
    );
    // Another port is another host too.
    const port = consentPage(details, "h1", { ...access, signInHost: "login.acme.example:8443" });
    expect(port).toContain(
      'on another host, <strong id="sign-in-host">login.acme.example:8443</strong>:',
    );
  });

  it("shows a client's name of up to 64 characters whole, and cuts a longer one at a character", () => {
    expect(shownName(" Claude Code ")).toBe("Claude Code");
    expect(shownName("a".repeat(64))).toBe("a".repeat(64));
    // Characters, not UTF-16 units: an emoji is never cut in half.
    const cut = shownName(`${"a".repeat(62)}😀😀😀`);
    expect(Array.from(cut)).toHaveLength(64);
    expect(cut).toBe(`${"a".repeat(62)}😀…`);
  });

  it("shows a client's name without the controls that would reorder the page's words around it", () => {
    // U+202E turns what follows right to left: "Claude \u202Eelpmaxe.live" reads "Claude evil.example".
    expect(shownName("Claude \u202Eelpmaxe.live\u202C")).toBe("Claude elpmaxe.live");
    expect(
      shownName("a\u2066b\u2067c\u2068d\u2069e\u200Ff\u200Eg\u061Ch\u202Ai\u202Bj\u202Dk"),
    ).toBe("abcdefghijk");
    const page = consentPage({ ...details, clientName: "Desk\u202E" }, "h", access);
    expect(page).not.toContain("\u202E");
  });
});
