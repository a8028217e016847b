/**
 * How the npm scripts read their options (scripts/lib/command.ts), asked in
 * this process: a mistyped option is told by the option it was likely meant
 * to be, not by Node's advice to put it after `--` (which `npm run X --`
 * already is), a mistyped command so too (`npm run client -- lsit`), and
 * `npm run tenant`'s `--auth gate` by how gate mode is written.
 */
import { describe, expect, it } from "vitest";
import { client } from "../../scripts/client";
import { argumentsOf, Refused } from "../../scripts/lib/command";
import { add } from "../../scripts/tenant";

const USAGE = "Usage: npm run tenant -- add NAME --origin URL";
const options = {
  origin: { type: "string" },
  "workers-dev": { type: "string" },
  config: { type: "string", short: "c" },
} as const;
const read = (args: string[]) =>
  argumentsOf({ args, allowPositionals: true, options }, USAGE) as unknown;

describe("an option the command does not know", () => {
  it.each([
    [["add", "x", "--orgin", "https://x.example/mcp"], "--orgin", "--origin"],
    [["add", "x", "--workers_dev=x"], "--workers_dev", "--workers-dev"],
    [["add", "x", "--Config", "w.toml"], "--Config", "--config"],
  ])("%j is told as %s, with the option it is closest to", (args, given, meant) => {
    expect(() => read(args)).toThrow(
      new Refused(`${given}: no such option; did you mean ${meant}?\n${USAGE}`),
    );
  });

  it("is told alone where no option is close to it", () => {
    expect(() => read(["add", "x", "--auth-mode", "broker"])).toThrow(
      new Refused(`--auth-mode: no such option.\n${USAGE}`),
    );
    expect(() => read(["add", "x", "-z"])).toThrow(new Refused(`-z: no such option.\n${USAGE}`));
  });
});

describe("npm run tenant -- add --auth", () => {
  it("says how gate mode is written, which --auth does not take", () => {
    expect(() =>
      add(["nx", "--origin", "https://x.example/mcp", "--host", "x.example", "--auth", "gate"]),
    ).toThrow(
      expect.objectContaining({
        constructor: Refused,
        message: expect.stringContaining(
          '--auth is relay or broker; gate mode is written with --auth broker, then AUTH_MODE = "gate" (docs/sign-in.md, "Gate mode").',
        ),
      }),
    );
  });
});

describe("npm run client -- <a command it does not know>", () => {
  const URL = "http://127.0.0.1:9/mcp";
  it.each([
    ["lsit", 'unknown command "lsit"; did you mean list?'],
    ["CALL", 'unknown command "CALL"; did you mean call?'],
    ["cal", 'unknown command "cal"; did you mean call?'],
    ["show", 'unknown command "show".'],
  ])("%s is named, with the command it is closest to, before the usage", async (word, said) => {
    // Refused before any request: nothing listens on port 9 (discard).
    const refused = client([word, URL, "files_read"]).catch((error: unknown) => error);
    const error = await refused;
    expect(error).toBeInstanceOf(Refused);
    const [first, usage] = (error as Refused).message.split("\n");
    expect(first).toBe(said);
    expect(usage).toBe("Usage: npm run client -- list URL | call URL TOOL [KEY=VALUE ...]");
  });

  it.each([
    ["li\u0007st", '"li\\u0007st"'],
    ["\u009bist", '"\\u009bist"'],
  ])("a control character in it is not written to the terminal raw: %j", async (word, quoted) => {
    const error = await client([word, URL]).catch((e: unknown) => e);
    expect((error as Refused).message.split("\n")[0]).toBe(
      `unknown command ${quoted}; did you mean list?`,
    );
  });
});
