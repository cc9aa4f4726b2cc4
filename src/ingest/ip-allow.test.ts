import { describe, expect, it } from "vitest";
import { addressList, clientAddress, isCidr } from "./ip-allow.ts";

describe("addressList", () => {
  const list = addressList(["203.0.113.0/24", "198.51.100.7", "2001:db8::/32"]);

  it.each([
    ["203.0.113.0", true],
    ["203.0.113.255", true],
    ["203.0.114.0", false],
    ["198.51.100.7", true],
    ["198.51.100.8", false],
    ["::ffff:203.0.113.9", true],
    ["2001:db8::1", true],
    ["2001:db8:ffff:ffff::1", true],
    ["2001:db9::1", false],
    ["not an ip", false],
  ])("%s → %s", (address, expected) => {
    expect(list.has(address)).toBe(expected);
  });

  it("validates CIDRs", () => {
    expect(["10.0.0.0/8", "::1", "2001:db8::/128", "1.2.3.4/32"].every(isCidr)).toBe(true);
    expect(
      ["10.0.0.0/33", "1.2.3", "2001:db8::/129", "10.0.0.0/x", "host.example"].some(isCidr),
    ).toBe(false);
  });
});

describe("clientAddress", () => {
  const proxies = addressList(["10.0.0.0/8", "fd00::/8"]);

  it("uses the socket peer when no proxy is trusted, ignoring X-Forwarded-For", () => {
    expect(clientAddress("198.51.100.7", "203.0.113.9", null)).toBe("198.51.100.7");
    expect(clientAddress("198.51.100.7", "203.0.113.9", proxies)).toBe("198.51.100.7");
  });

  it("walks X-Forwarded-For from the right past trusted proxies", () => {
    expect(clientAddress("10.0.0.2", "203.0.113.9", proxies)).toBe("203.0.113.9");
    expect(clientAddress("10.0.0.2", "203.0.113.9, 10.0.0.1", proxies)).toBe("203.0.113.9");
    expect(clientAddress("fd00::2", "2001:db8::5", proxies)).toBe("2001:db8::5");
  });

  it("never picks a forged left-hand entry over an untrusted hop to its right", () => {
    expect(clientAddress("10.0.0.2", "203.0.113.1, 198.51.100.66", proxies)).toBe("198.51.100.66");
  });

  it("normalises IPv4-mapped peers", () => {
    expect(clientAddress("::ffff:198.51.100.7", undefined, proxies)).toBe("198.51.100.7");
  });
});
