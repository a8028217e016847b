/**
 * What the sign-in limit counts a client address under (auth/sign-in-limit.ts
 * `limitKeyOf`): an IPv6 address's /64, however it is written; an IPv4
 * address itself.
 */
import { describe, expect, it } from "vitest";
import { limitKeyOf } from "../../src/auth/sign-in-limit";

describe("limitKeyOf", () => {
  it.each([
    ["2001:db8:77:1::1", "2001:db8:77:1::/64"],
    ["2001:db8:77:1:ffff:ffff:ffff:ffff", "2001:db8:77:1::/64"],
    ["2001:0DB8:0077:0001:0::9", "2001:db8:77:1::/64"],
    ["2001:db8::", "2001:db8:0:0::/64"],
    ["2001:db8::1:2:3:4", "2001:db8:0:0::/64"],
    ["2001:db8:1::2:3:4:5", "2001:db8:1:0::/64"],
    ["::1", "0:0:0:0::/64"],
    ["fe80::1%eth0", "fe80:0:0:0::/64"],
  ])("counts %s under its network, %s", (address, key) => {
    expect(limitKeyOf(address)).toBe(key);
  });

  it.each(["192.0.2.1", "::ffff:192.0.2.1", "unknown", "2001:db8:zz::1"])(
    "counts %s as it is",
    (address) => {
      expect(limitKeyOf(address)).toBe(address);
    },
  );
});
