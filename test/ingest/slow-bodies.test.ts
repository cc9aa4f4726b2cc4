import { connect, type Socket } from "node:net";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it, vi } from "vitest";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import { postStandard } from "../helpers/post-standard.ts";
import { standardRequest, testSources } from "../helpers/signers.ts";
import { tempDir } from "../helpers/temp.ts";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const slowHead =
  "POST /webhooks/standard HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n";

/** A connection from `localAddress` that sent its headers and one body byte; resolves once connected. */
function slowBody(url: string, localAddress: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), localAddress });
    socket.on("error", () => undefined);
    socket.once("connect", () => {
      socket.write(`${slowHead}{`);
      resolve(socket);
    });
    socket.once("error", reject);
  });
}

/** Resolves with what the server sent once it closed the socket. */
const closedByServer = (socket: Socket) =>
  new Promise<string>((resolve) => {
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", () => undefined);
    if (socket.destroyed) resolve("");
    socket.once("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
  });

async function gatewayWith(name: string, http: Record<string, unknown>) {
  const gateway = await startGateway(
    {
      store: `sqlite:${join(tmp.dir, `${name}.db`)}`,
      http,
      sources: { standard: testSources.standard },
    },
    { env: {}, port: 0 },
  );
  let requests = 0;
  gateway.server.on("request", () => requests++);
  return { gateway, requests: () => requests };
}

function eventCount(name: string): number {
  const db = new Database(join(tmp.dir, `${name}.db`), { readonly: true });
  const row = db.prepare("SELECT count(*) AS n FROM events").get() as { n: number };
  db.close();
  return row.n;
}

const closedMetric = async (gateway: Gateway, reason: string) => {
  const { body } = await gateway.inbox.metrics!.render();
  const line = new RegExp(
    `^hookinbox_connections_closed_total\\{reason="${reason}"\\} (\\d+)$`,
    "m",
  );
  return Number(line.exec(body)?.[1] ?? 0);
};

describe("slow bodies", () => {
  it("answers a body below http.minBodyRate 408 HOOKINBOX_BODY_TOO_SLOW and closes it; a body at the rate is stored", async () => {
    const { gateway } = await gatewayWith("rate", {
      minBodyRate: { bytesPerSecond: 100, grace: "1s", window: "1s" },
    });
    // One byte every 100 ms: 10 bytes/s, under the 100 the config asks.
    const slow = await slowBody(gateway.url, "127.0.0.1");
    const answer = closedByServer(slow);
    const drip = setInterval(() => slow.writable && slow.write(" "), 100);
    const text = await answer;
    clearInterval(drip);
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(text).toContain('"code":"HOOKINBOX_BODY_TOO_SLOW"');
    expect(text.toLowerCase()).toContain("connection: close");

    // 1,000 bytes in ten 100-byte pieces, one every 400 ms (250 bytes/s over 4 s): stored.
    const body = JSON.stringify({ type: "user.created", pad: "x".repeat(968) });
    expect(body.length).toBe(1000);
    const request = standardRequest("msg_paced", body);
    const { hostname, port } = new URL(gateway.url);
    const paced = connect({ host: hostname, port: Number(port) });
    const pacedAnswer = closedByServer(paced);
    paced.write(
      `POST /webhooks/standard HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: 1000\r\n${Object.entries(
        request.headers,
      )
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join("")}\r\n`,
    );
    for (let i = 0; i < 10; i++) {
      paced.write(body.slice(i * 100, i * 100 + 100));
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    expect(await pacedAnswer).toMatch(/^HTTP\/1\.1 200 /);
    await gateway.close();
    expect(eventCount("rate")).toBe(1);
  }, 20_000);

  it("holds a connection over http.maxConnectionsPerAddress unread, then resets it; other addresses are served", async () => {
    const { gateway, requests } = await gatewayWith("share", {
      maxConnectionsPerAddress: 3,
      minBodyRate: false,
    });
    const held = [];
    for (let i = 0; i < 3; i++) held.push(await slowBody(gateway.url, "127.0.0.2"));
    // Each has a request in progress (an idle one would be closed to admit the next).
    await vi.waitFor(() => expect(requests()).toBe(3));
    // Refused, it is held unread (a client resetting in a loop would burn the gateway's CPU),
    // then reset: nothing of its request reaches node:http.
    const refused = await slowBody(gateway.url, "127.0.0.2");
    const answer = closedByServer(refused);
    await vi.waitFor(() => expect(gateway.connections.held()).toBe(1));
    expect(refused.destroyed).toBe(false);
    expect(await answer).toBe("");
    expect(gateway.connections.held()).toBe(0);
    expect(requests()).toBe(3);
    expect(gateway.connections.counts.addressShare).toBe(1);
    expect(await postStandard(gateway.url, "msg_share")).toMatchObject({
      status: 200,
      json: { duplicate: false },
    });
    expect(held.every((socket) => !socket.destroyed)).toBe(true);
    expect(await closedMetric(gateway, "address-share")).toBe(1);
    for (const socket of held) socket.destroy();
    await gateway.close();
    expect(eventCount("share")).toBe(1);
  });

  it("holds at most http.maxConnections refused connections (the rest are reset at once), and releases them at shutdown", async () => {
    const { gateway, requests } = await gatewayWith("hold-cap", {
      maxConnections: 4,
      maxConnectionsPerAddress: 1,
      minBodyRate: false,
    });
    const busy = await slowBody(gateway.url, "127.0.0.2");
    await vi.waitFor(() => expect(requests()).toBe(1));
    const refused = [];
    for (let i = 0; i < 4; i++) refused.push(await slowBody(gateway.url, "127.0.0.2"));
    await vi.waitFor(() => expect(gateway.connections.held()).toBe(4));
    // The fifth finds the hold full: reset at once, while the four are still held.
    const fifth = await slowBody(gateway.url, "127.0.0.2").then(closedByServer, () => "");
    expect(fifth).toBe("");
    expect(gateway.connections.held()).toBe(4);
    expect(refused.every((socket) => !socket.destroyed)).toBe(true);
    expect(gateway.connections.counts.addressShare).toBe(5);
    const released = Promise.all(refused.map(closedByServer));
    busy.destroy();
    await gateway.close();
    expect(gateway.connections.held()).toBe(0);
    await released;
    expect(requests()).toBe(1);
  });

  it("at http.maxConnections with every slot busy, closes the oldest connection of the address holding the most to admit another address", async () => {
    const { gateway, requests } = await gatewayWith("fair", {
      maxConnections: 4,
      maxConnectionsPerAddress: false,
      minBodyRate: false,
    });
    const held = [];
    for (let i = 0; i < 4; i++) held.push(await slowBody(gateway.url, "127.0.0.2"));
    await vi.waitFor(() => expect(requests()).toBe(4));
    const firstClosed = closedByServer(held[0]!);
    expect(await postStandard(gateway.url, "msg_fair")).toMatchObject({
      status: 200,
      json: { duplicate: false },
    });
    await firstClosed;
    expect(gateway.connections.counts).toEqual({
      evicted: 0,
      refused: 0,
      addressShare: 0,
      fairShare: 1,
    });
    expect(held.slice(1).every((socket) => !socket.destroyed)).toBe(true);
    expect(await closedMetric(gateway, "fair-share")).toBe(1);
    for (const socket of held) socket.destroy();
    await gateway.close();
    expect(eventCount("fair")).toBe(1);
  });

  it("exempts peers in http.trustedProxies from the per-address share", async () => {
    const { gateway } = await gatewayWith("proxy", {
      maxConnectionsPerAddress: 2,
      minBodyRate: false,
      trustedProxies: ["127.0.0.2/32"],
    });
    const held = [];
    for (let i = 0; i < 5; i++) held.push(await slowBody(gateway.url, "127.0.0.2"));
    await vi.waitFor(() => expect(gateway.connections.open()).toBe(5));
    expect(gateway.connections.counts.addressShare).toBe(0);
    expect(held.every((socket) => !socket.destroyed)).toBe(true);
    for (const socket of held) socket.destroy();
    await gateway.close();
  });
});
