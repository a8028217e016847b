import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseChallenges, quote, withResourceMetadata } from "../../src/auth/challenges";
import { metadataUrlsReadBySdks } from "../helpers/sdk-challenge-readers";

const summary = (header: string) =>
  parseChallenges(header).map(({ scheme, params }) => ({
    scheme,
    params: Object.fromEntries(params.map(({ name, value }) => [name, value])),
  }));

/** The proxy's metadata, as the tests rewrite every `resource_metadata` to. */
const NEW = "https://proxy.test/.well-known/oauth-protected-resource/mcp";

/** Replaces every `resource_metadata` with `NEW`, as the proxy does one on the origin's host. */
const rewrite = (header: string) => withResourceMetadata(header, () => NEW);

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

describe("resource_metadata, as the proxy writes it", () => {
  it("replaces resource_metadata and keeps every other challenge and parameter as sent", () => {
    const header =
      'Basic realm="x", Bearer error="invalid_token", error_description="Token, expired", resource_metadata="https://o/.well-known/oauth-protected-resource/mcp", scope="a b"';
    expect(rewrite(header)).toBe(
      `Basic realm="x", Bearer error="invalid_token", error_description="Token, expired", resource_metadata="${NEW}", scope="a b"`,
    );
  });

  it("replaces a token value too, and the parameter in every challenge, written as the SDK clients read it", () => {
    expect(rewrite('Bearer resource_metadata=u, DPoP RESOURCE_METADATA = "v"')).toBe(
      `Bearer resource_metadata="${NEW}", DPoP resource_metadata="${NEW}"`,
    );
  });

  it("keeps a value `replace` keeps as written", () => {
    expect(withResourceMetadata('Bearer resource_metadata="https://e/x"', () => undefined)).toBe(
      'Bearer resource_metadata="https://e/x"',
    );
  });

  it("returns a header that never names resource_metadata as sent, byte for byte", () => {
    for (const header of [
      'Bearer realm="mcp", scope="files:read"',
      "Negotiate YIIB+w==",
      ' ,Bearer  realm = "a" ,, error=invalid_token junk',
    ]) {
      expect(rewrite(header)).toBe(header);
    }
  });

  it("leaves out every other text that names it: in a value, a name, a token68, or past a break", () => {
    expect(
      rewrite(
        'Bearer realm="resource_metadata=https://evil/", xResource_Metadata="https://evil/", error="e", resource_metadata="https://o/"',
      ),
    ).toBe(`Bearer error="e", resource_metadata="${NEW}"`);
    expect(rewrite('Negotiate resource_metadata==, Bearer resource_metadata="u"')).toBe(
      `Negotiate, Bearer resource_metadata="${NEW}"`,
    );
    expect(rewrite('Bearer realm="a" junk resource_metadata="https://evil/"')).toBe(
      'Bearer realm="a"',
    );
  });

  it("quotes the new value", () => {
    const header = 'Bearer resource_metadata="u"';
    expect(withResourceMetadata(header, () => 'a"b\\c')).toBe(
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

  it("replaces the values asked for and keeps every other parameter as written", () => {
    fc.assert(
      fc.property(header, printable, ({ text }, replacement) => {
        const out = withResourceMetadata(text, () => replacement);
        const read = parseChallenges(text);
        if (!/resource_metadata/i.test(text)) {
          expect(out).toBe(text);
          return;
        }
        const names = (param: { name: string; value: string }) =>
          /resource_metadata/i.test(param.name) || /resource_metadata/i.test(param.value);
        const expected = read.map(({ scheme, params }) => ({
          scheme,
          params: params.flatMap((param) =>
            param.name === "resource_metadata"
              ? [{ name: param.name, value: replacement }]
              : names(param)
                ? []
                : [{ name: param.name, value: param.value }],
          ),
        }));
        expect(
          parseChallenges(out).map(({ scheme, params }) => ({
            scheme,
            params: params.map(({ name, value }) => ({ name, value })),
          })),
        ).toEqual(expected);
      }),
      { numRuns: 2000 },
    );
  });

  it("leaves the SDK clients nothing to read but the value written, wherever other text named resource_metadata", () => {
    const evil = "https://evil.example/";
    // Text that names it, put anywhere in a header: grammar or none.
    const smuggled = fc.constantFrom(
      `resource_metadata="${evil}"`,
      `resource_metadata=${evil}`,
      `, xresource_metadata="${evil}"`,
      `"resource_metadata=${evil}"`,
      ` junk resource_metadata="${evil}"`,
      `, Bearer realm="resource_metadata=${evil}"`,
    );
    fc.assert(
      fc.property(header, smuggled, fc.nat(), ({ text }, smuggle, at) => {
        const cut = at % (text.length + 1);
        const out = rewrite(text.slice(0, cut) + smuggle + text.slice(cut));
        const read = metadataUrlsReadBySdks(out);
        for (const url of read) expect([NEW, undefined]).toContain(url);
        if (/^bearer /i.test(out) && out.includes("resource_metadata=")) {
          expect(read).toEqual([NEW, NEW, NEW, NEW]);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
