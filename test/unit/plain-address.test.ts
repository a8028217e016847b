/**
 * What gate mode tells the origin of a user (`ORIGIN_USER_HEADER`): only an
 * address no reader takes for another (config/gate.ts `isPlainAddress`), and
 * what a log line names of any address: its domain, when it is one
 * (auth/identity.ts `domainOf`). The identities are as the providers' readers
 * leave them: trimmed, ASCII in lower case.
 */
import { describe, expect, it } from "vitest";
import { domainOf } from "../../src/auth/identity";
import { isPlainAddress } from "../../src/config";

describe("isPlainAddress", () => {
  it.each([
    "alice@acme.test",
    "quinn.o'brien+mcp@acme.test",
    "a!#$%&'*+/=?^_`{|}~-z@eu.acme.test",
    // An internationalized domain in its ASCII form: the name DNS knows it by.
    "user@xn--bcher-kva.example",
  ])("tells the origin %s", (email) => {
    expect(isPlainAddress(email)).toBe(true);
  });

  it.each([
    ["outside ASCII, folded to another's", "\u212Aate@acme.test"],
    ["outside ASCII, in the domain", "kate@b\u00fccher.example"],
    ["a list", "kate@acme.test,eve@partner.test"],
    ["a line break", "eve@acme.test\r\nx-user-email: kate@acme.test"],
    ["a NUL", "kate\u0000@acme.test"],
    ["a space", "kate @acme.test"],
    ["a quoted local part", '"kate@acme.test"@partner.test'],
    ["a comment", "kate(eve)@acme.test"],
    ["a name and an address", "kate <kate@acme.test>"],
    ["two @", "kate@acme.test@partner.test"],
    ["an address literal", "kate@[192.0.2.1]"],
    ["a domain without a dot", "kate@localhost"],
    ["no local part", "@acme.test"],
    ["capitals, which the identity never keeps", "Kate@acme.test"],
    ["more than 320 characters", `${"k".repeat(64)}@${"a".repeat(251)}.test`],
  ])("tells the origin no address with %s", (_, email) => {
    expect(isPlainAddress(email)).toBe(false);
  });
});

describe("domainOf", () => {
  it("is what follows the last @, when that is a domain name", () => {
    expect(domainOf("kate@acme.test")).toBe("acme.test");
    expect(domainOf('"a@b"@acme.test')).toBe("acme.test");
    expect(domainOf("eve@partner.test\r\nx-user-email: kate")).toBeUndefined();
    expect(domainOf("kate@acme.test,eve")).toBeUndefined();
    expect(domainOf("kate@b\u00fccher.example")).toBeUndefined();
    expect(domainOf(undefined)).toBeUndefined();
  });
});
