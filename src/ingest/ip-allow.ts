import { BlockList, isIP } from "node:net";

/** Strips an IPv4-mapped IPv6 prefix (`::ffff:203.0.113.9` → `203.0.113.9`). */
export function normaliseAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address;
}

function parseCidr(
  text: string,
): { address: string; prefix: number; family: "ipv4" | "ipv6" } | null {
  const [address = "", prefixText] = text.trim().split("/");
  const version = isIP(address);
  if (version === 0) return null;
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (
    !Number.isInteger(prefix) ||
    prefix < 0 ||
    prefix > max ||
    (prefixText !== undefined && !/^\d+$/.test(prefixText))
  )
    return null;
  return { address, prefix, family: version === 4 ? "ipv4" : "ipv6" };
}

/**
 * Whether a string is an IPv4/IPv6 address or CIDR.
 *
 * @example
 * ```ts
 * isCidr("203.0.113.0/24"); // true
 * ```
 */
export function isCidr(text: string): boolean {
  return parseCidr(text) !== null;
}

/** A compiled list of addresses and CIDRs. */
export interface AddressList {
  has(address: string): boolean;
}

/**
 * Compiles CIDRs (IPv4 and IPv6, with or without a prefix) into a matcher; IPv4-mapped IPv6
 * addresses match their IPv4 form.
 *
 * @example
 * ```ts
 * addressList(["203.0.113.0/24", "2001:db8::/32"]).has("203.0.113.9"); // true
 * ```
 */
export function addressList(cidrs: readonly string[]): AddressList {
  const list = new BlockList();
  for (const text of cidrs) {
    const cidr = parseCidr(text);
    if (!cidr) throw new Error(`not an address or CIDR: ${text}`);
    list.addSubnet(cidr.address, cidr.prefix, cidr.family);
  }
  return {
    has(address) {
      const plain = normaliseAddress(address);
      const version = isIP(plain);
      if (version === 0) return false;
      return list.check(plain, version === 4 ? "ipv4" : "ipv6");
    },
  };
}

/**
 * The client's address: the socket peer, unless that peer is a trusted proxy, in which case
 * X-Forwarded-For is read from the right, skipping trusted proxies, and the first untrusted hop
 * is the client. A forged left-hand X-Forwarded-For entry can therefore never be chosen while an
 * untrusted hop stands to its right.
 *
 * @example
 * ```ts
 * clientAddress("10.0.0.2", "198.51.100.7, 10.0.0.1", addressList(["10.0.0.0/8"])); // "198.51.100.7"
 * ```
 */
export function clientAddress(
  peer: string | null,
  forwardedFor: string | undefined,
  trusted: AddressList | null,
): string | null {
  if (peer === null) return null;
  const direct = normaliseAddress(peer);
  if (!trusted?.has(direct) || !forwardedFor) return direct;
  const hops = forwardedFor
    .split(",")
    .map((h) => normaliseAddress(h.trim()))
    .filter((h) => isIP(h) !== 0);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (!trusted.has(hop)) return hop;
  }
  return hops[0] ?? direct;
}
