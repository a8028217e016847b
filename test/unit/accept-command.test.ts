/**
 * The command a held change's log line gives (toolmap/definition-pins.ts
 * `acceptCommand`): for the environment the proxy runs in, and one word per
 * argument whatever the origin named its tool.
 */
import { describe, expect, it } from "vitest";
import { acceptCommand } from "../../src/toolmap/definition-pins";

const PIN = "3f2a/1b/2c/3d/-/-/-";

describe("acceptCommand", () => {
  it("names the tenant's environment, or wrangler dev's KV on this machine", () => {
    expect(acceptCommand(PIN, "files.read", "acme")).toBe(
      `npm run holds -- accept files.read --pin ${PIN} --env acme`,
    );
    expect(acceptCommand(PIN, "files.read", undefined)).toBe(
      `npm run holds -- accept files.read --pin ${PIN} --local`,
    );
    expect(acceptCommand(PIN, "files.read", "acme", true)).toBe(
      `npm run holds -- accept files.read --pin ${PIN} --env acme --local`,
    );
  });

  it.each([
    ["$(touch pwned)", "'$(touch pwned)'"],
    ["`id`", "'`id`'"],
    ["a b;rm -rf ~", "'a b;rm -rf ~'"],
    ["it's", "'it'\\''s'"],
  ])("quotes a tool named %j as one shell word, so pasting it runs nothing else", (name, word) => {
    expect(acceptCommand(PIN, name, "acme")).toBe(
      `npm run holds -- accept ${word} --pin ${PIN} --env acme`,
    );
  });

  it.each([
    ['say "hi"\n', `$'say "hi"\\x0a'`],
    ["\u202Edaer.elif", "$'\\u202edaer.elif'"],
    ["it's\u200B\u001b]0;x\u0007", "$'it\\'s\\u200b\\x1b]0;x\\x07'"],
    ["back\\slash\u2060", "$'back\\\\slash\\u2060'"],
    ["files.read\u00ad\u{e0069}\u{e0067}", "$'files.read\\u00ad\\U000e0069\\U000e0067'"],
  ])(
    "writes a name with a control or invisible character %j as $'…', each escaped (bash, zsh)",
    (name, word) => {
      expect(acceptCommand(PIN, name, "acme")).toBe(
        `npm run holds -- accept ${word} --pin ${PIN} --env acme`,
      );
    },
  );

  it("quotes a name that zsh, macOS's shell, would expand: =ls is /bin/ls there", () => {
    expect(acceptCommand(PIN, "=ls", "acme")).toBe(
      `npm run holds -- accept '=ls' --pin ${PIN} --env acme`,
    );
  });

  it("puts a name that starts with a dash after --, where no option is read", () => {
    expect(acceptCommand(PIN, "-rf", "acme")).toBe(
      `npm run holds -- accept --pin ${PIN} --env acme -- '-rf'`,
    );
  });
});
