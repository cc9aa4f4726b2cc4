import { describe, expect, it } from "vitest";
import { isRefusedAddress, type Resolver } from "../../src/forward/address-guard.ts";
import type { InboxOptions } from "../../src/inbox.ts";
import { onCleanup } from "../helpers/cleanups.ts";
import { processingInbox, until } from "../helpers/processing.ts";
import { destinationSecret, receiver } from "./forward-env.ts";

// The SSRF guard: destinations resolving to loopback, private, link-local (cloud metadata) or
// IPv4-mapped addresses are refused by default, by IP literal, through a host name (a test
// resolver), and through a redirect (never followed). A real receiver on loopback shows that
// nothing reached it. Store-independent, so on SQLite only.

/** An inbox on SQLite routing `std` to every destination, one attempt each unless told. */
function inbox(destinations: Record<string, Record<string, unknown>>, options: InboxOptions = {}) {
  const env = processingInbox(
    {
      destinations,
      routes: [{ from: "std", to: Object.keys(destinations) }],
      retry: { schedule: ["50ms"], jitter: "none", maxAttempts: 2 },
      worker: { pollInterval: "50ms" },
    },
    options,
  );
  onCleanup(env.cleanup);
  return env;
}

/** Posts one event and waits for every delivery to finish (done or dead). */
async function deliverOne(env: ReturnType<typeof inbox>) {
  const worker = env.inbox.startWorker();
  const { eventId } = await env.post("msg_ssrf", { type: "t" });
  const event = await until(async () => {
    const e = await env.inbox.store.getEvent(eventId);
    return e?.deliveries.every((d) => d.status === "done" || d.status === "dead") ? e : null;
  });
  await worker.stop();
  return event;
}

const secret = destinationSecret;

describe("SSRF guard", () => {
  it("classifies addresses: loopback, private, CGNAT, link-local, metadata, multicast and IPv4 in IPv6 are refused", () => {
    const refused = [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "192.168.1.1",
      "100.64.0.1",
      "169.254.169.254",
      "0.0.0.0",
      "224.0.0.1",
      "255.255.255.255",
      "::1",
      "::",
      "fe80::1",
      "fc00::1",
      "fd00:ec2::254",
      "ff02::1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "::ffff:169.254.169.254",
      "::ffff:a9fe:a9fe",
      "64:ff9b::a9fe:a9fe",
      "2002:7f00:1::",
      "not-an-address",
    ];
    const allowed = ["93.184.216.34", "8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8"];
    expect(refused.filter((a) => !isRefusedAddress(a))).toEqual([]);
    expect(allowed.filter((a) => isRefusedAddress(a))).toEqual([]);
  });

  it("refuses IP-literal targets by default: nothing is sent, the delivery is dead at once", async () => {
    const app = await receiver();
    const targets = {
      loopback: `http://127.0.0.1:${app.port}/hooks`,
      mapped: `http://[::ffff:127.0.0.1]:${app.port}/hooks`,
      mappedHex: `http://[::ffff:7f00:1]:${app.port}/hooks`,
      private: "http://10.0.0.1/hooks",
      metadata: "http://169.254.169.254/latest/meta-data/",
    };
    const destinations = Object.fromEntries(
      Object.entries(targets).map(([name, url]) => [name, { url, secret }]),
    );
    const event = await deliverOne(inbox(destinations));
    expect(app.requests).toHaveLength(0);
    expect(event.deliveries).toHaveLength(5);
    for (const delivery of event.deliveries) {
      expect(delivery.status).toBe("dead");
      expect(delivery.attempts).toBe(1);
      expect(delivery.lastError).toContain("HOOKINBOX_FORWARD_ADDRESS_REFUSED");
      expect(delivery.attemptLog![0]!.response?.errorClass).toBe("address-refused");
    }
  });

  it("refuses a host name that resolves to a refused address (checked where the socket connects)", async () => {
    const app = await receiver();
    const answers: Record<string, Array<{ address: string; family: number }>> = {
      "loopback.test": [{ address: "127.0.0.1", family: 4 }],
      "metadata.test": [{ address: "169.254.169.254", family: 4 }],
      "private.test": [{ address: "192.168.0.10", family: 4 }],
      "mapped.test": [{ address: "::ffff:127.0.0.1", family: 6 }],
      // One private address among public ones is enough to refuse.
      "mixed.test": [
        { address: "93.184.216.34", family: 4 },
        { address: "127.0.0.1", family: 4 },
      ],
      "allowed.test": [{ address: "127.0.0.1", family: 4 }],
    };
    const asked: string[] = [];
    const resolver: Resolver = async (hostname) => {
      asked.push(hostname);
      return answers[hostname] ?? [];
    };
    const url = (host: string) => `http://${host}:${app.port}/hooks`;
    const destinations: Record<string, Record<string, unknown>> = {
      loopback: { url: url("loopback.test"), secret },
      metadata: { url: url("metadata.test"), secret },
      private: { url: url("private.test"), secret },
      mapped: { url: url("mapped.test"), secret },
      mixed: { url: url("mixed.test"), secret },
      // The same resolver with private networks allowed: the request reaches the receiver.
      allowed: { url: url("allowed.test"), secret, allowPrivateNetworks: true },
    };
    const event = await deliverOne(inbox(destinations, { resolver }));
    expect(app.requests).toHaveLength(1);
    expect(app.requests[0]!.headers.host).toBe(`allowed.test:${app.port}`);
    const byTarget = new Map(event.deliveries.map((d) => [d.target, d]));
    expect(byTarget.get("allowed")!.status).toBe("done");
    for (const name of ["loopback", "metadata", "private", "mapped", "mixed"]) {
      const delivery = byTarget.get(name)!;
      expect(delivery.status).toBe("dead");
      expect(delivery.lastError).toContain("HOOKINBOX_FORWARD_ADDRESS_REFUSED");
      expect(delivery.attemptLog![0]!.response?.errorClass).toBe("address-refused");
    }
    expect(new Set(asked)).toEqual(new Set(Object.keys(answers)));
  });

  it("a host name that does not resolve is a DNS failure, retried, not a refusal", async () => {
    const resolver: Resolver = async () => [];
    const env = inbox(
      { app: { url: "http://nowhere.test/hooks", secret, retry: { maxAttempts: 3 } } },
      { resolver },
    );
    const event = await deliverOne(env);
    const delivery = event.deliveries[0]!;
    expect(delivery.status).toBe("dead");
    expect(delivery.attempts).toBe(3);
    expect(delivery.lastError).toContain("HOOKINBOX_FORWARD_NETWORK");
    expect(delivery.attemptLog!.map((a) => a.response?.errorClass)).toEqual(["dns", "dns", "dns"]);
  });

  it("never follows a redirect, to a metadata address or anywhere else", async () => {
    const elsewhere = await receiver();
    const app = await receiver((_r, index) => ({
      status: index % 2 === 0 ? 302 : 307,
      headers: {
        location: index % 2 === 0 ? "http://169.254.169.254/latest/meta-data/" : elsewhere.url,
      },
    }));
    const event = await deliverOne(
      inbox({ app: { url: app.url, secret, allowPrivateNetworks: true } }),
    );
    expect(app.requests).toHaveLength(2);
    expect(elsewhere.requests).toHaveLength(0);
    const delivery = event.deliveries[0]!;
    expect(delivery.status).toBe("dead");
    expect(delivery.lastError).toContain("HOOKINBOX_FORWARD_REDIRECT");
    expect(delivery.attemptLog!.map((a) => a.response?.status)).toEqual([302, 307]);
    expect(delivery.attemptLog![0]!.response!.headers!.location).toBe(
      "http://169.254.169.254/latest/meta-data/",
    );
  });
});
