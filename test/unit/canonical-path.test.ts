import { describe, expect, it } from "vitest";
import { canonicalPath, rawPathOf } from "../../src/canonical-path";

describe("canonicalPath", () => {
  it.each([
    ["/mcp", "/mcp"],
    ["/%6dcp", "/mcp"],
    ["/%6Dcp", "/mcp"],
    ["/mcp/%67emini", "/mcp/gemini"],
    ["/.well-known/%6fauth-authorization-server", "/.well-known/oauth-authorization-server"],
    ["/a%7eb", "/a~b"],
    ["/a%20b", "/a%20b"],
    ["/a%c3%a9", "/a%C3%A9"],
    ["/mcp;a=b", "/mcp;a=b"],
    ["/mcp/", "/mcp/"],
    ["/", "/"],
  ])("reads %s as %s", (raw, canonical) => {
    expect(canonicalPath(raw)).toEqual({ kind: "canonical", path: canonical });
  });

  it.each([
    ["/mcp%2fgemini", "an encoded /, \\ or %"],
    ["/mcp%5Cgemini", "an encoded /, \\ or %"],
    ["/mcp%252fgemini", "an encoded /, \\ or %"],
    ["/mcp\\gemini", "a backslash"],
    ["/mcp%g1", "a malformed %-escape"],
    ["/mcp%2", "a malformed %-escape"],
    ["/./mcp", "a . or .. segment"],
    ["/x/../mcp", "a . or .. segment"],
    ["/%2e/mcp", "a . or .. segment"],
    ["/mcp/%2E%2E", "a . or .. segment"],
    ["/x/..;/mcp", "a . or .. segment"],
    ["/x/.;a=b/mcp", "a . or .. segment"],
    ["/x/..%3Bx/mcp", "a . or .. segment"],
    ["/x/%2E%2e%3b/mcp", "a . or .. segment"],
    ["//mcp", "an empty segment (//)"],
    ["/mcp//gemini", "an empty segment (//)"],
  ])("refuses %s: %s", (raw, reason) => {
    expect(canonicalPath(raw)).toEqual({ kind: "refused", reason });
  });
});

describe("rawPathOf", () => {
  it("takes the path as written, without query or fragment", () => {
    expect(rawPathOf("http://proxy.test/%6dcp?x=%2f#y")).toBe("/%6dcp");
    expect(rawPathOf("http://proxy.test")).toBe("/");
    expect(rawPathOf("http://proxy.test?x=/a")).toBe("/");
    expect(rawPathOf("http://proxy.test:8787/a/b")).toBe("/a/b");
  });
});
