/**
 * Which resource broker mode asks the origin's authorization server for
 * (auth/upstream.ts `originResource`): the origin's own, or a part of its
 * host that holds it, as RFC 9728 §3.3 and the official SDK's client read the
 * origin's metadata; never another server's.
 */
import { describe, expect, it } from "vitest";
import { originResource } from "../../src/auth/upstream";

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
