/**
 * Listings whose tools have members MCP's clients refuse (src/protocol/tool-shape.ts), read
 * from their text and parsed whole, property based: members written in every shape (strings,
 * numbers, `null`, arrays, hints as text), keys spelled with escapes, under rules that hide
 * by name and by annotation, in every profile. Both paths show the same tools, each of them
 * one SDK 1.x's client and the profile's provider take, and no tool the rules hide.
 */
import { ListToolsResultSchema } from "@modelcontextprotocol/sdk/types.js";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { parseExact } from "../../src/json";
import { rewriteJsonText, rewriteMessages } from "../../src/rewrite/listing-answer";
import { NO_POLICY, type ToolPolicy } from "../../src/rules/tool-rules";
import { freshToolMap } from "../helpers/fresh-tool-map";
import { writesAKeyTwice } from "../helpers/key-written-twice";
import { PROVIDER_RULES } from "../helpers/provider-rules";
import { rulesOf } from "../helpers/tool-rules";

/** A member's key as written: as it is, or with a letter escaped (`"descr\u0069ption"`). */
const keyOf = (key: string) =>
  fc.constantFrom(
    JSON.stringify(key),
    `"${key.slice(0, 1)}\\u${key.charCodeAt(1).toString(16).padStart(4, "0")}${key.slice(2)}"`,
  );

const anyValue = fc.constantFrom("null", "7", '"x"', "[]", "{}", "true", '[{"src":1}]');

const memberTexts = {
  title: fc.oneof(fc.constant('"Title"'), anyValue),
  description: fc.oneof(fc.constant('"Reads a file."'), anyValue),
  inputSchema: fc.oneof(
    fc.constant('{"type":"object","properties":{"path":{"type":"string"}}}'),
    fc.constant('{"properties":{"p":true,"q":false,"r":3},"required":["p",1]}'),
    fc.constant('{"type":"string"}'),
    anyValue,
  ),
  outputSchema: fc.oneof(fc.constant('{"type":"object"}'), anyValue),
  annotations: fc.oneof(
    fc.constantFrom(
      '{"destructiveHint":true}',
      '{"destructiveHint":"true"}',
      '{"destructiveHint":null,"readOnlyHint":true}',
      '{"destruct\\u0069veHint":true}',
      '{"readOnlyHint":1,"title":"T"}',
      '{"title":7}',
    ),
    anyValue,
  ),
  icons: fc.oneof(fc.constant('[{"src":"https://x/i.png","theme":"dark"}]'), anyValue),
  _meta: fc.oneof(fc.constant('{"example.com/v":1.50}'), anyValue),
  execution: fc.oneof(fc.constant('{"taskSupport":"optional"}'), anyValue),
};

const toolText = fc
  .record({
    name: fc.constantFrom('"files.read"', '"hidden.tool"', '"drop_table"', '"ok"'),
    ...Object.fromEntries(
      Object.entries(memberTexts).map(([key, value]) => [
        key,
        fc.option(fc.tuple(keyOf(key), value), { nil: undefined }),
      ]),
    ),
  })
  .chain(({ name, ...members }) => {
    const written = Object.values(members).flatMap((member) =>
      member === undefined ? [] : [(member as [string, string]).join(":")],
    );
    return fc
      .tuple(
        keyOf("name"),
        fc.shuffledSubarray(written, { minLength: written.length }),
        // Now and then a member written twice (each reader takes its own), or one named `__proto__`.
        fc.oneof(
          { weight: 6, arbitrary: fc.constant([]) },
          { weight: 1, arbitrary: fc.constant(['"__proto__":{"description":null}']) },
          { weight: 1, arbitrary: fc.subarray(written, { maxLength: 1 }) },
          {
            weight: 2,
            arbitrary: fc
              .constantFrom(...(Object.keys(memberTexts) as Array<keyof typeof memberTexts>))
              .chain((key) => fc.tuple(keyOf(key), memberTexts[key]))
              .map(([key, value]) => [`${key}:${value}`]),
          },
        ),
      )
      .map(([nameKey, order, more]) => `{${[`${nameKey}:${name}`, ...order, ...more].join(",")}}`);
  });

/**
 * The result's members beside `tools` a client checks, in every shape (a cursor, `_meta`), and
 * one it does not, each before or after `tools`.
 */
const resultMembers = fc
  .tuple(
    fc.option(fc.constantFrom('"next"', "null", "7", "{}"), { nil: undefined }),
    fc.option(fc.constantFrom('{"trace":"t"}', "null", "[]", '"x"'), { nil: undefined }),
    fc.option(fc.constantFrom('"other"', "null"), { nil: undefined }),
    fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
  )
  .map(([cursor, meta, other, before]) => {
    const members = [
      cursor === undefined ? undefined : `"nextCursor" : ${cursor}`,
      meta === undefined ? undefined : `"_meta":${meta}`,
      other === undefined ? undefined : `"x-other":${other}`,
    ];
    return {
      before: members.filter((member, i) => member !== undefined && before[i]),
      after: members.filter((member, i) => member !== undefined && !before[i]),
    };
  });

const answerText = fc
  .tuple(
    fc.array(
      fc.oneof(
        { weight: 8, arbitrary: toolText },
        { weight: 1, arbitrary: fc.constantFrom("null", '{"name":7}', '{"title":"no name"}') },
      ),
      { maxLength: 5 },
    ),
    resultMembers,
  )
  .map(([tools, { before, after }]) => {
    const members = [...before, `"tools":[${tools.join(",")}]`, ...after];
    return `{"jsonrpc":"2.0","id":1,"result":{${members.join(" , ")}}}`;
  });

const HIDING: ToolPolicy = {
  rules: rulesOf({ hide: ["hidden.*"], hideAnnotated: { destructiveHint: true } }),
  changes: "allow",
};

describe("a listing whose tools have members no client takes", () => {
  it("is shown alike read from its text and parsed whole, every client takes it, and no hidden tool is in it", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    await fc.assert(
      fc.asyncProperty(
        answerText,
        fc.constantFrom("mcp", "openai", "gemini", "openai-strict"),
        fc.constantFrom(HIDING, NO_POLICY),
        async (text, profile, policy) => {
          const listIds = new Set([1]);
          const spliced =
            (await rewriteJsonText(text, { listIds, toolMap: freshToolMap(profile, policy) })) ??
            text;
          const whole =
            (await rewriteMessages(parseExact(text)?.value, {
              listIds,
              toolMap: freshToolMap(profile, policy),
            })) ?? parseExact(text)?.value;
          const shown = JSON.parse(spliced);
          expect(shown).toEqual(whole);
          expect(ListToolsResultSchema.safeParse(shown.result).error).toBeUndefined();
          // And the provider behind the profile takes each schema (the whole request, else).
          for (const tool of profile === "mcp" ? [] : shown.result.tools) {
            expect(PROVIDER_RULES[profile]?.(tool.inputSchema), tool.name).toEqual([]);
          }
          if (policy !== HIDING) return;
          // What a reader that takes a key's first value reads is what the proxy judged.
          expect(writesAKeyTwice(spliced)).toBe(false);
          for (const tool of shown.result.tools) {
            expect(tool.name).not.toMatch(/^hidden/);
            expect(tool.annotations?.destructiveHint).not.toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  }, 60_000);
});
