import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import { hookinboxError } from "../errors.ts";
import { addressList } from "../ingest/ip-allow.ts";

/** Resolves a host name to its addresses (the default is the system resolver). */
export type Resolver = (
  hostname: string,
) => Promise<ReadonlyArray<{ readonly address: string; readonly family: number }>>;

// Loopback, "this network", private (RFC 1918), CGNAT (RFC 6598), link-local (cloud metadata
// 169.254.169.254 included), IETF protocol assignments, benchmarking, multicast, reserved and
// broadcast.
const blockedV4 = addressList([
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.168.0.0/16",
  "198.18.0.0/15",
  "224.0.0.0/4",
  "240.0.0.0/4",
]);

// Unspecified, loopback, unique local (fd00:ec2::254, AWS's IPv6 metadata, among them),
// link-local, site-local (deprecated), multicast, discard-only.
const blockedV6 = addressList([
  "::/128",
  "::1/128",
  "fc00::/7",
  "fe80::/10",
  "fec0::/10",
  "ff00::/8",
  "100::/64",
]);

/** The 16 bytes of an IPv6 address (with or without a trailing dotted quad), or null. */
function ipv6Bytes(address: string): number[] | null {
  let text = address.toLowerCase();
  const zone = text.indexOf("%");
  if (zone !== -1) text = text.slice(0, zone);
  const tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    tail.push(...dotted[1]!.split(".").map(Number));
    text = `${text.slice(0, dotted.index)}0:0`;
  }
  const [head = "", rest] = text.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = rest === undefined || rest === "" ? [] : rest.split(":");
  const missing = 8 - left.length - right.length;
  if (rest === undefined ? missing !== 0 : missing < 0) return null;
  const groups = [...left, ...Array<string>(rest === undefined ? 0 : missing).fill("0"), ...right];
  const bytes: number[] = [];
  for (const group of groups) {
    const value = Number.parseInt(group, 16);
    if (!/^[0-9a-f]{1,4}$/.test(group) || Number.isNaN(value)) return null;
    bytes.push(value >> 8, value & 0xff);
  }
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

/** An IPv4 address carried inside an IPv6 one (mapped, compatible, NAT64, 6to4), or null. */
function embeddedIpv4(bytes: readonly number[]): string | null {
  const zeros = (from: number, to: number) => bytes.slice(from, to).every((b) => b === 0);
  const v4 = (at: number) => bytes.slice(at, at + 4).join(".");
  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return v4(12); // ::ffff:a.b.c.d
  if (zeros(0, 12) && !zeros(12, 16)) return v4(12); // ::a.b.c.d (deprecated compatible)
  // 64:ff9b::/96 (NAT64) and 64:ff9b:1::/48 (local-use NAT64)
  if (bytes[0] === 0 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b) return v4(12);
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return v4(2); // 2002::/16 (6to4)
  return null;
}

/**
 * Whether an address is one a destination may not reach without `allowPrivateNetworks`:
 * loopback, private, link-local, CGNAT, multicast, reserved or cloud metadata, in IPv4, IPv6 or
 * an IPv4 address carried in IPv6 (`::ffff:127.0.0.1`, `::ffff:7f00:1`, NAT64, 6to4). Anything
 * that is not an IP address is refused too.
 *
 * @example
 * ```ts
 * isRefusedAddress("169.254.169.254"); // true
 * isRefusedAddress("::ffff:7f00:1");   // true (127.0.0.1)
 * isRefusedAddress("93.184.216.34");   // false
 * ```
 */
export function isRefusedAddress(address: string): boolean {
  const version = isIP(address);
  if (version === 4) return blockedV4.has(address);
  if (version !== 6) return true;
  const bytes = ipv6Bytes(address);
  if (!bytes) return true;
  const v4 = embeddedIpv4(bytes);
  if (v4 !== null) return blockedV4.has(v4);
  return blockedV6.has(address);
}

/** The host of a URL as an address when it is an IP literal (`[::1]` → `::1`), else null. */
export function literalAddress(url: URL): string | null {
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) === 0 ? null : host;
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | Array<{ address: string; family: number }>,
  family?: number,
) => void;

/**
 * A `lookup` for the HTTP client's sockets that resolves with `resolve` and refuses refused
 * addresses (unless `allowPrivate`): the check runs on the very addresses the socket connects
 * to, so a host that resolves to a public address once and to a private one later (DNS
 * rebinding) cannot pass it. A refusal fails the connect with HOOKINBOX_FORWARD_ADDRESS_REFUSED.
 *
 * @example
 * ```ts
 * const agent = new Agent({ connect: { lookup: guardedLookup(systemResolver, false) } });
 * ```
 */
export function guardedLookup(resolve: Resolver, allowPrivate: boolean) {
  return (
    hostname: string,
    options: { all?: boolean; family?: number | string },
    callback: LookupCallback,
  ) => {
    const family =
      options.family === "IPv4" ? 4 : options.family === "IPv6" ? 6 : Number(options.family ?? 0);
    resolve(hostname).then(
      (found) => {
        const addresses = found.filter((a) => !family || family === a.family);
        if (addresses.length === 0) {
          const error: NodeJS.ErrnoException = new Error(`no address for ${hostname}`);
          error.code = "ENOTFOUND";
          callback(error, "");
          return;
        }
        const refused = allowPrivate
          ? undefined
          : addresses.find((a) => isRefusedAddress(a.address));
        if (refused) {
          callback(
            hookinboxError(
              "HOOKINBOX_FORWARD_ADDRESS_REFUSED",
              `${hostname} resolved to ${refused.address}`,
            ) as unknown as NodeJS.ErrnoException,
            "",
          );
          return;
        }
        if (options.all)
          callback(
            null,
            addresses.map((a) => ({ address: a.address, family: a.family })),
          );
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ""),
    );
  };
}

/**
 * The system resolver (`getaddrinfo`, every address).
 *
 * @example
 * ```ts
 * await systemResolver("localhost"); // [{ address: "127.0.0.1", family: 4 }, …]
 * ```
 */
export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true });
