import { describe, expect, it } from "vitest";
import { parseChallenges, replaceChallengeParams } from "../../src/auth/challenges";

const summary = (header: string) =>
  parseChallenges(header).map(({ scheme, params }) => ({
    scheme,
    params: Object.fromEntries(params.map(({ name, value }) => [name, value])),
  }));

/** Replaces `resource_metadata` of Bearer challenges with `NEW`, as the proxy does. */
const rewrite = (header: string) =>
  replaceChallengeParams(header, (challenge, param) =>
    challenge.scheme === "bearer" && param.name === "resource_metadata" ? "NEW" : undefined,
  );

describe("reading WWW-Authenticate (RFC 9110)", () => {
  it("reads one Bearer challenge with quoted and token values", () => {
    expect(
      summary('Bearer realm="mcp", error=invalid_token, resource_metadata="https://o/x"'),
    ).toEqual([
      {
        scheme: "bearer",
        params: { realm: "mcp", error: "invalid_token", resource_metadata: "https://o/x" },
      },
    ]);
  });

  it("tells several challenges apart, commas inside quotes included", () => {
    expect(
      summary(
        'Basic realm="a, b", Bearer error="invalid_token", error_description="bad, very bad", scope="x y",DPoP algs="ES256 PS256"',
      ),
    ).toEqual([
      { scheme: "basic", params: { realm: "a, b" } },
      {
        scheme: "bearer",
        params: { error: "invalid_token", error_description: "bad, very bad", scope: "x y" },
      },
      { scheme: "dpop", params: { algs: "ES256 PS256" } },
    ]);
  });

  it("reads escapes, token68, bare schemes, spaces around = and empty list elements", () => {
    expect(
      summary(
        ', Negotiate YIIB+w==, ,Bearer  realm = "say \\"hi\\"" ,, resource_metadata="u", Newauth',
      ),
    ).toEqual([
      { scheme: "negotiate", params: {} },
      { scheme: "bearer", params: { realm: 'say "hi"', resource_metadata: "u" } },
      { scheme: "newauth", params: {} },
    ]);
  });

  it("stops at the first break in the grammar", () => {
    expect(summary('Bearer a="1", b="unterminated')).toEqual([
      { scheme: "bearer", params: { a: "1" } },
    ]);
    expect(summary("Bearer a=1 junk, Basic realm=x")).toEqual([
      { scheme: "bearer", params: { a: "1" } },
    ]);
    expect(summary("")).toEqual([]);
  });
});

describe("replacing one parameter", () => {
  it("replaces resource_metadata of a Bearer challenge and keeps every other byte", () => {
    const header =
      'Basic realm="x", Bearer error="invalid_token", error_description="Token, expired", resource_metadata="https://o/.well-known/oauth-protected-resource/mcp", scope="a b"';
    expect(rewrite(header)).toBe(
      'Basic realm="x", Bearer error="invalid_token", error_description="Token, expired", resource_metadata="NEW", scope="a b"',
    );
  });

  it("replaces a token value too, and the parameter in every Bearer challenge", () => {
    expect(rewrite('Bearer resource_metadata=u, Bearer RESOURCE_METADATA="v"')).toBe(
      'Bearer resource_metadata="NEW", Bearer RESOURCE_METADATA="NEW"',
    );
  });

  it("leaves other schemes and a challenge without resource_metadata as they are", () => {
    for (const header of [
      'DPoP resource_metadata="https://o/x", algs="ES256"',
      'Basic realm="resource_metadata=\\"https://o/x\\""',
      'Bearer realm="mcp", scope="files:read"',
      "Negotiate YIIB+w==",
    ]) {
      expect(rewrite(header)).toBe(header);
    }
  });

  it("quotes the new value", () => {
    const header = 'Bearer resource_metadata="u"';
    expect(replaceChallengeParams(header, () => 'a"b\\c')).toBe(
      'Bearer resource_metadata="a\\"b\\\\c"',
    );
  });
});
