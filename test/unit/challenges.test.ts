import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseChallenges, quote, replaceChallengeParams } from "../../src/auth/challenges";

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

describe("WWW-Authenticate, any header written by the grammar (property)", () => {
  const token = fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,8}$/);
  const space = fc.stringMatching(/^[ \t]{0,2}$/);
  // A quoted value may hold anything printable: quotes, backslashes, commas, `=`, spaces.
  const printable = fc.stringMatching(/^[\x20-\x7e]{0,12}$/);
  const param = fc.record({
    name: fc.oneof(token, fc.constantFrom("resource_metadata", "Resource_Metadata", "realm")),
    value: fc.oneof(token, printable),
    quoted: fc.boolean(),
    before: space,
    after: space,
  });
  const challenge = fc.record({
    scheme: fc.oneof(token, fc.constantFrom("Bearer", "bearer", "DPoP")),
    params: fc.array(param, { maxLength: 4 }),
  });
  // Commas with optional whitespace, now and then an empty list element.
  const separator = fc.constantFrom(",", ", ", " ,", " , ", ",,", ", ,\t");
  const header = fc
    .tuple(
      fc.array(challenge, { minLength: 1, maxLength: 3 }),
      fc.array(separator, { minLength: 8, maxLength: 8 }),
    )
    .map(([challenges, separators]) => {
      let at = 0;
      const next = () => separators[at++ % separators.length] as string;
      const text = challenges
        .map(({ scheme, params }) => {
          const written = params.map(({ name, value, quoted, before, after }) => {
            const asToken = !quoted && /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(value);
            return `${name}${before}=${after}${asToken ? value : quote(value)}`;
          });
          return written.length === 0 ? scheme : `${scheme} ${written.join(next())}`;
        })
        .join(next());
      const expected = challenges.map(({ scheme, params }) => ({
        scheme: scheme.toLowerCase(),
        params: params.map(({ name, value }) => ({ name: name.toLowerCase(), value })),
      }));
      return { text, expected };
    });

  it("reads every challenge and parameter as written, each value where it is written", () => {
    fc.assert(
      fc.property(header, ({ text, expected }) => {
        const read = parseChallenges(text);
        expect(
          read.map(({ scheme, params }) => ({
            scheme,
            params: params.map(({ name, value }) => ({ name, value })),
          })),
        ).toEqual(expected);
        for (const { params } of read)
          for (const { value, start, end } of params) {
            const written = text.slice(start, end);
            expect(written.startsWith('"') ? written : quote(written)).toBe(quote(value));
          }
      }),
      { numRuns: 2000 },
    );
  });

  it("replaces the values asked for and keeps every other byte", () => {
    fc.assert(
      fc.property(header, printable, ({ text }, replacement) => {
        const out = rewrite(text);
        const targets = parseChallenges(text).flatMap(({ scheme, params }) =>
          scheme === "bearer" ? params.filter(({ name }) => name === "resource_metadata") : [],
        );
        // The text around the values replaced is the header's own.
        let kept = "";
        let at = 0;
        for (const { start, end } of targets) {
          kept += `${text.slice(at, start)}"NEW"`;
          at = end;
        }
        expect(out).toBe(kept + text.slice(at));
        const again = replaceChallengeParams(text, () => replacement);
        expect(
          parseChallenges(again).flatMap(({ params }) => params.map(({ value }) => value)),
        ).toEqual(parseChallenges(text).flatMap(({ params }) => params.map(() => replacement)));
      }),
      { numRuns: 2000 },
    );
  });
});
