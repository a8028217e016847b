/**
 * Which resource broker mode asks the origin's authorization server for
 * (auth/upstream.ts `originResource`): the origin's own, or a part of its
 * host that holds it, as RFC 9728 §3.3 and the official SDK's client read the
 * origin's metadata; never another server's.
 */
import { describe, expect, it } from "vitest";
import { issuerOf, originResource } from "../../src/auth/upstream";

const ORIGIN = new URL("https://mcp.example.com/api/mcp?key=secret");

describe("the resource broker mode asks tokens for", () => {
  it("is ORIGIN_URL without its query when the metadata names none", () => {
    expect(originResource(undefined, ORIGIN)).toBe("https://mcp.example.com/api/mcp");
  });

  it.each([
    "https://mcp.example.com/api/mcp",
    "https://mcp.example.com/api/mcp/",
    "https://mcp.example.com/api",
    "https://mcp.example.com/",
    "https://mcp.example.com",
    "https://mcp.example.com:443/api",
  ])("is %s, as the metadata names it: it holds ORIGIN_URL", (named) => {
    expect(originResource(named, ORIGIN)).toBe(named);
  });

  it.each([
    ["another host", "https://mail.example.com/api/mcp"],
    ["another port", "https://mcp.example.com:8443/api/mcp"],
    ["plain http", "http://mcp.example.com/api/mcp"],
    ["a sibling path", "https://mcp.example.com/api/admin"],
    ["a longer name", "https://mcp.example.com/api/mcp-admin"],
    ["a path below", "https://mcp.example.com/api/mcp/admin"],
    ["a prefix of a segment", "https://mcp.example.com/ap"],
    ["no URL", "mcp.example.com"],
    ["a URN", "urn:example:mcp"],
    ["no string", 42],
    ["null", null],
  ])("refuses %s: the token would be another server's", (_, named) => {
    expect(() => originResource(named, ORIGIN)).toThrow(
      expect.objectContaining({ reason: "resource_mismatch" }),
    );
  });
});

describe("a resource that does not hold ORIGIN_URL", () => {
  // Origins that take a key in their path (`/k/<key>/mcp`) are served so: the reason is logged
  // (sign_in_failed's detail), and the log holds neither ORIGIN_URL's query nor its path.
  const keyed = new URL("https://mcp.example.com/k/s3cr3t-key/mcp");
  const causeOf = (named: unknown) => {
    try {
      originResource(named, keyed);
    } catch (error) {
      return String((error as Error).cause);
    }
    throw new Error("not refused");
  };

  it.each([
    [
      "the same host",
      "https://mcp.example.com/k/other/mcp",
      "on the same host, a path that does not hold ORIGIN_URL's",
    ],
    [
      "another host",
      "https://mail.example.com/k/s3cr3t-key/mcp",
      "at https://mail.example.com, another origin than ORIGIN_URL's (https://mcp.example.com)",
    ],
    ["no URL", "k/s3cr3t-key", "no URL"],
  ])("is logged by its host, with %s, never ORIGIN_URL's path", (_, named, said) => {
    const cause = causeOf(named);
    expect(cause).toContain(said);
    expect(cause).not.toContain("s3cr3t-key");
  });
});

describe("the authorization server broker mode signs in at", () => {
  const named = ["https://auth.example.com/", "https://login.example.net/tenant"];

  it("is the first the origin's metadata names, or the origin's host when it names none", () => {
    expect(issuerOf(named, undefined, ORIGIN).href).toBe("https://auth.example.com/");
    expect(issuerOf([], undefined, ORIGIN).href).toBe("https://mcp.example.com/");
  });

  it("is none where the first the metadata names is not a URL", () => {
    expect(() => issuerOf(["auth.example.com"], undefined, ORIGIN)).toThrow(
      expect.objectContaining({ reason: "no_authorization_server" }),
    );
  });

  it.each([
    ["https://auth.example.com", named],
    ["https://login.example.net/tenant", named],
    ["https://auth.example.com/", []],
  ])(
    "is UPSTREAM_ISSUER %s where the metadata names it among others, or names none",
    (pinned, among) => {
      expect(issuerOf(among, new URL(pinned), ORIGIN).href).toBe(new URL(pinned).href);
    },
  );

  it.each([
    "https://evil.example/",
    "https://login.example.net/tenant/",
    "http://auth.example.com/",
  ])("refuses metadata that does not name UPSTREAM_ISSUER %s", (pinned) => {
    expect(() => issuerOf(named, new URL(pinned), ORIGIN)).toThrow(
      expect.objectContaining({ reason: "issuer_mismatch" }),
    );
  });
});
