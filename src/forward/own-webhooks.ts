import { BlockList, isIP } from "node:net";
import { hostname, networkInterfaces } from "node:os";
import { hookinboxError } from "../errors.ts";

/** Where this process receives webhooks: its listener (when it has one) and its public URL. */
export interface WebhookListener {
  /** The host the listener is bound to (`0.0.0.0`/`::` for every address), or null for none. */
  readonly host: string | null;
  /** The port it listens on, or null for none (a library inbox mounted in someone's server). */
  readonly port: number | null;
  /** `http.publicUrl`: the base URL providers call. */
  readonly publicUrl: string | null;
}

// Loopback and "every address": a connection to any of them on the listener's port reaches it.
const loopback = new BlockList();
loopback.addSubnet("127.0.0.0", 8, "ipv4");
loopback.addAddress("0.0.0.0", "ipv4");
loopback.addAddress("::1", "ipv6");
loopback.addAddress("::", "ipv6");
loopback.addSubnet("::ffff:127.0.0.0", 104, "ipv6");
loopback.addAddress("::ffff:0.0.0.0", "ipv6");

const bare = (host: string) =>
  (host.startsWith("[") ? host.slice(1, -1) : host).toLowerCase().replace(/\.$/, "");

function isLoopbackName(host: string): boolean {
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  const version = isIP(host);
  return version !== 0 && loopback.check(host, version === 4 ? "ipv4" : "ipv6");
}

/** The names and addresses of this machine (for a listener bound to every address). */
function machineHosts(): Set<string> {
  const hosts = new Set<string>([hostname().toLowerCase()]);
  for (const list of Object.values(networkInterfaces()))
    for (const item of list ?? []) hosts.add(item.address.toLowerCase());
  return hosts;
}

const portOf = (url: URL) => (url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80);
const underWebhooks = (path: string, base = "") =>
  path.startsWith(`${base}/webhooks/`) || path.startsWith("/webhooks/");

/**
 * Whether a destination URL is this process's own webhook endpoint: a `/webhooks/` path on the
 * listener's port at its host, a loopback name (`localhost`, `127.0.0.0/8`, `::1`), `0.0.0.0`/`::`
 * or, for a listener on every address, any address or the name of this machine; or under
 * `publicUrl` (same host and port). Host names are not resolved.
 *
 * @example
 * ```ts
 * pointsAtOwnWebhooks(new URL("http://localhost:8080/webhooks/stripe"), { host: "127.0.0.1", port: 8080, publicUrl: null }); // true
 * ```
 */
export function pointsAtOwnWebhooks(url: URL, listener: WebhookListener): boolean {
  const host = bare(url.hostname);
  if (listener.publicUrl) {
    const own = new URL(listener.publicUrl);
    const base = own.pathname.replace(/\/+$/, "");
    if (bare(own.hostname) === host && portOf(own) === portOf(url))
      if (underWebhooks(url.pathname, base)) return true;
  }
  if (listener.host === null || listener.port === null || portOf(url) !== listener.port)
    return false;
  if (!underWebhooks(url.pathname)) return false;
  const bound = bare(listener.host);
  if (host === bound || isLoopbackName(host)) return true;
  const everyAddress = bound === "" || bound === "0.0.0.0" || bound === "::";
  return everyAddress && machineHosts().has(host);
}

/**
 * Refuses destinations whose URL is this process's own webhook endpoint (see
 * pointsAtOwnWebhooks): every event forwarded there would come back as a new event, forever.
 * Throws HOOKINBOX_DESTINATION_LOOP naming the first one.
 *
 * @example
 * ```ts
 * refuseOwnWebhookDestinations(config.destinations.values(), { host: "0.0.0.0", port: 8080, publicUrl: null });
 * ```
 */
export function refuseOwnWebhookDestinations(
  destinations: Iterable<{ readonly name: string; readonly url: URL }>,
  listener: WebhookListener,
): void {
  for (const destination of destinations) {
    if (!pointsAtOwnWebhooks(destination.url, listener)) continue;
    const shown = `${destination.url.protocol}//${destination.url.host}${destination.url.pathname}`;
    throw hookinboxError(
      "HOOKINBOX_DESTINATION_LOOP",
      `destinations.${destination.name}.url is ${shown}; point it at the app that handles the events`,
    );
  }
}
