import { describe, expect, it } from "vitest";
import { sha256 } from "../../src/digest";

const base64url = (buffer: ArrayBuffer) =>
  btoa(String.fromCharCode(...new Uint8Array(buffer)))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");

/** The runtime's own SHA-256 of the text's UTF-8 bytes, each in a buffer of its own. */
const expected = async (text: string) =>
  base64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));

describe("sha256", () => {
  it("is SHA-256 of the UTF-8 bytes, in base64url without padding", async () => {
    expect(await sha256("abc")).toBe("ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
    expect(await sha256("")).toBe("47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
  });

  it("digests each of many texts started at once, short and long, as its own", async () => {
    const texts = [
      "a",
      "é".repeat(30_000),
      "x".repeat(70_000),
      "tool \u{1F600} \ud800 lone",
      "b".repeat(65_536),
      `${"c".repeat(21_846)}€`,
    ];
    const started = texts.map((text) => sha256(text));
    expect(await Promise.all(started)).toEqual(await Promise.all(texts.map(expected)));
  });
});
