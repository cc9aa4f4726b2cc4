// Identity fields are decoded strictly, and rejected requests stay bounded: capped header names,
// a retention sweep, and a per-/64 limit for IPv6 (issue 8, items 6 and 7).
import { createHmac } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import { openStore } from "../../src/store/open-store.ts";
import { testAdminToken } from "../helpers/admin-token.ts";
import { rawExchange } from "../helpers/raw-http.ts";
import { storeFactories, type TestStore } from "../helpers/stores.ts";

const secret = "hmac-identity-secret";
const day = 86_400_000;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sources = {
  // The id from a JSON path into the body.
  body: { provider: "hmac", header: "x-signature", secrets: [secret], identity: { id: "$.id" } },
  // The id from a header.
  header: { provider: "hmac", header: "x-signature", secrets: [secret], idHeader: "x-event-id" },
};

async function gateway(storeUrl: string, http: Record<string, unknown> = {}): Promise<Gateway> {
  const gw = await startGateway(
    { store: storeUrl, sources, http, worker: { enabled: false } },
    { env: {}, port: 0, adminToken: testAdminToken },
  );
  cleanups.push(() => gw.close());
  return gw;
}

const sign = (body: Uint8Array) => createHmac("sha256", secret).update(body).digest("hex");

/** Posts raw body bytes to the body-id source. */
async function postBody(gw: Gateway, body: Buffer) {
  const response = await fetch(`${gw.url}/webhooks/body`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-signature": sign(body) },
    body: new Uint8Array(body),
  });
  return { status: response.status, json: (await response.json()) as any };
}

/** Posts to the header-id source with the id header written as raw bytes. */
async function postHeaderId(gw: Gateway, id: Uint8Array) {
  const body = Buffer.from('{"ok":true}');
  const head = Buffer.from(
    `POST /webhooks/header HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nx-signature: ${sign(body)}\r\ncontent-length: ${body.length}\r\nconnection: close\r\nx-event-id: `,
    "latin1",
  );
  const answer = await rawExchange(
    gw.url,
    Buffer.concat([head, id, Buffer.from("\r\n\r\n"), body]),
  );
  return { status: answer.status, code: /"code":"([A-Z_0-9]+)"/.exec(answer.text)?.[1] };
}

const bytes = (...parts: Array<string | number[]>) =>
  Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))));

describe.each(storeFactories())("identity and rejected receipts ($name)", ({ open }) => {
  let store: TestStore;
  const openTestStore = async () => {
    store = await open();
    cleanups.push(() => store.cleanup());
    return store;
  };
  const events = () => store.count("SELECT count(*) AS n FROM events");
  const rejected = () => store.count("SELECT count(*) AS n FROM receipts WHERE event_id IS NULL");

  it("refuses ids that differ only in invalid UTF-8 bytes (body, header, lone surrogate) and merges nothing", async () => {
    const gw = await gateway((await openTestStore()).url);
    const answers = [
      await postBody(gw, bytes('{"id":"evt_', [0xff], '"}')),
      await postBody(gw, bytes('{"id":"evt_', [0xfe], '"}')),
      await postBody(gw, bytes('{"id":"evt_\\ud800"}')),
      await postBody(gw, bytes('{"id":"evt_\\udbff"}')),
    ];
    expect(answers.map((a) => [a.status, a.json.error.code])).toEqual([
      [400, "HOOKINBOX_IDENTITY_INVALID_UTF8"],
      [400, "HOOKINBOX_IDENTITY_INVALID_UTF8"],
      [400, "HOOKINBOX_IDENTITY_INVALID_UTF8"],
      [400, "HOOKINBOX_IDENTITY_INVALID_UTF8"],
    ]);
    const headerAnswers = [
      await postHeaderId(gw, bytes("evt_", [0xff])),
      await postHeaderId(gw, bytes("evt_", [0xc3, 0x28])),
    ];
    expect(headerAnswers).toEqual([
      { status: 400, code: "HOOKINBOX_IDENTITY_INVALID_UTF8" },
      { status: 400, code: "HOOKINBOX_IDENTITY_INVALID_UTF8" },
    ]);
    // Valid non-ASCII ids are stored, one event each; a U+FFFD sent as valid UTF-8 is an id too.
    const valid = [
      await postBody(gw, bytes('{"id":"évt_1"}')),
      await postBody(gw, bytes('{"id":"évt_2"}')),
      await postBody(gw, bytes('{"id":"evt_\uFFFD"}')),
      await postHeaderId(gw, bytes("évt_3")),
    ];
    expect(valid.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    await gw.close();
    expect(await events()).toBe(4);
    expect(await rejected()).toBe(6);
    expect(
      (await store.rows<{ dedup_key: string }>("SELECT dedup_key FROM events ORDER BY id")).map(
        (r) => r.dedup_key,
      ),
    ).toEqual(["évt_1", "évt_2", "evt_\uFFFD", Buffer.from("évt_3").toString("latin1")]);
  });

  it("keeps at most 50 header names of 64 characters on a rejected receipt", async () => {
    const gw = await gateway((await openTestStore()).url);
    const flood = Array.from({ length: 120 }, (_, i) => `x-flood-${i}-${"a".repeat(90)}`);
    const answer = await rawExchange(
      gw.url,
      `POST /webhooks/body HTTP/1.1\r\nhost: x\r\n${flood.map((n) => `${n}: 1\r\n`).join("")}content-length: 2\r\nconnection: close\r\n\r\n{}`,
    );
    expect(answer.status).toBe(400);
    expect(answer.text).toContain("HOOKINBOX_SIGNATURE_MISSING");
    await gw.close();
    const rows = await store.rows<{ header_names: unknown }>(
      "SELECT header_names FROM receipts WHERE event_id IS NULL",
    );
    expect(rows).toHaveLength(1);
    const raw = rows[0]!.header_names;
    const names = (typeof raw === "string" ? JSON.parse(raw) : raw) as string[];
    const expected = ["host", ...flood.slice(0, 49).map((n) => n.slice(0, 64))];
    expect(names).toEqual(expected);
    expect(names).toHaveLength(50);
    expect(JSON.stringify(names).length).toBe(JSON.stringify(expected).length);
    expect(JSON.stringify(names).length).toBe(3_291);
    expect(await events()).toBe(0);
  });

  it("deletes rejected receipts past the retention at start, in batches, and never accepted ones", async () => {
    const { url } = await openTestStore();
    const seed = openStore(url);
    await seed.migrate();
    const now = Date.now();
    const rejection = (receivedAt: number) => ({
      source: "body",
      receivedAt,
      remoteAddress: "198.51.100.7",
      status: 401,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      size: 2,
      headerNames: ["host"],
    });
    // 2,100 old ones take three batches of at most 1,000.
    for (let i = 0; i < 2_100; i += 300) {
      await Promise.all(
        Array.from({ length: Math.min(300, 2_100 - i) }, (_, j) =>
          seed.recordRejection(rejection(now - 8 * day - (i + j))),
        ),
      );
    }
    await Promise.all([1, 2, 3].map((h) => seed.recordRejection(rejection(now - h * 3_600_000))));
    await seed.accept({
      source: "body",
      identity: { dedupKey: "old", type: null, occurredAt: null, orderingKey: null, version: null },
      body: new TextEncoder().encode('{"id":"old"}'),
      headers: [["host", "x"]],
      receivedAt: now - 30 * day,
      remoteAddress: null,
      secretIndex: 0,
    });
    await seed.close();
    expect(await rejected()).toBe(2_103);

    const gw = await gateway(url);
    // The sweep that started with the gateway; joining it waits for its last batch.
    expect((await gw.retention.sweep()).rejected).toBe(2_100);
    await gw.close();
    expect(await rejected()).toBe(3);
    expect(await store.count("SELECT count(*) AS n FROM receipts WHERE event_id IS NOT NULL")).toBe(
      1,
    );

    // A shorter retention (http.rejectedRetention) removes what is older than it.
    const shorter = await gateway(url, { rejectedRetention: "150m" });
    expect((await shorter.retention.sweep()).rejected).toBe(1);
    await shorter.close();
    expect(await rejected()).toBe(2);
    expect(await events()).toBe(1);
  });
});

describe("the rejection limit per address", () => {
  it("counts IPv6 addresses per /64 and IPv4-mapped addresses as IPv4", async () => {
    const store = await storeFactories()[0]!.open();
    cleanups.push(() => store.cleanup());
    const gw = await gateway(store.url, {
      trustedProxies: ["127.0.0.1", "::1"],
      rejectLimit: { max: 2, window: "1h" },
    });
    const forged = (from: string) =>
      fetch(`${gw.url}/webhooks/body`, {
        method: "POST",
        headers: { "x-signature": "00", "x-forwarded-for": from },
        body: '{"id":"x"}',
      }).then((r) => r.status);
    const statuses: number[] = [];
    for (const from of [
      "2001:db8:1:2::1",
      "2001:db8:1:2:ffff:ffff:ffff:ffff",
      "2001:db8:1:2::99", // third in the same /64: limited
      "2001:db8:1:3::1", // another /64: its own count
      "::ffff:198.51.100.7",
      "198.51.100.7",
      "::ffff:c633:6407", // the same IPv4 address, hex-written: limited
      "198.51.100.8",
    ]) {
      statuses.push(await forged(from));
    }
    expect(statuses).toEqual([401, 401, 429, 401, 401, 401, 429, 401]);
    await gw.close();
    // Rate-limited requests write nothing.
    expect(await store.count("SELECT count(*) AS n FROM receipts")).toBe(6);
  });
});
