import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testAdminToken } from "../helpers/admin-token.ts";
import { runCli } from "../helpers/cli-capture.ts";
import { freePort } from "../helpers/free-port.ts";
import { type GatewayProcess, spawnCommand, spawnGateway } from "../helpers/gateway-process.ts";
import { type Receiver, startReceiver } from "../helpers/receiver.ts";
import { secrets, standardRequest } from "../helpers/signers.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";
import { tempDir } from "../helpers/temp.ts";

// `hookinbox listen` against a real gateway (a child process) through a TCP proxy the test cuts,
// forwarding to a real node:http app on loopback: 100 events while the stream is cut twice reach
// the app once each, in the order the gateway accepted them, signed as the gateway signs.

const readToken = "listen-read-token-3b9e1f7a0c5d2e84b6";
/** Control and reordering characters, which must never reach a terminal raw (a string: Biome). */
const pattern = (source: string) => new RegExp(source, "u");
const controls = pattern("[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u202a-\\u202e]");
/** The app's Standard Webhooks secret (what `--secret` signs with). */
const appSecret = "whsec_dGhlLWxvY2FsLWFwcHMtc2VjcmV0LWtleS0wMQ==";

let tmp: ReturnType<typeof tempDir>;
let gateway: GatewayProcess;
let proxy: TcpProxy;
/** The gateway's own destination: every event is also forwarded (and delivered) there. */
let sink: Receiver;
const running: GatewayProcess[] = [];

beforeAll(async () => {
  tmp = tempDir();
  sink = await startReceiver();
  gateway = await spawnGateway(tmp.dir, {
    store: `sqlite:${join(tmp.dir, "listen.db")}`,
    sources: { standard: { provider: "standard-webhooks", secrets: [secrets.standard] } },
    destinations: {
      sink: { url: `${sink.url}/hooks`, secret: appSecret, allowPrivateNetworks: true },
    },
    routes: [{ from: "standard", to: "sink" }],
    admin: { token: testAdminToken, readToken },
  });
  const port = Number(new URL(gateway.url).port);
  proxy = await startTcpProxy({ host: "127.0.0.1", port });
});

afterAll(async () => {
  for (const child of running) {
    child.child.kill("SIGTERM");
    await child.exited();
  }
  await proxy?.close();
  gateway?.child.kill("SIGTERM");
  await gateway?.exited();
  await sink?.close();
  tmp?.cleanup();
});

/** Posts one signed event to the gateway (directly, not through the proxy); its event id. */
async function send(n: number, type = "user.created"): Promise<string> {
  const request = standardRequest(`msg_${n}`, JSON.stringify({ type, n }));
  const response = await fetch(`${gateway.url}/webhooks/standard`, {
    method: "POST",
    headers: request.headers,
    body: request.body,
  });
  const json = (await response.json()) as { eventId: string };
  expect(response.status).toBe(200);
  return json.eventId;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function listen(args: string[]): Promise<GatewayProcess> {
  return spawnCommand(tmp.dir, ["listen", ...args], {}, { ready: /connected to/ }).then((p) => {
    running.push(p);
    return p;
  });
}

async function stop(child: GatewayProcess): Promise<void> {
  child.child.kill("SIGTERM");
  await child.exited();
}

describe("hookinbox listen", () => {
  let app: Receiver;
  beforeAll(async () => {
    app = await startReceiver();
  });
  afterAll(async () => {
    await app?.close();
  });

  it("forwards 100 events once each in arrival order while the stream is cut twice", async () => {
    const cli = await listen([
      "--gateway",
      `http://127.0.0.1:${proxy.port}`,
      "--forward-to",
      `${app.url}/webhooks/standard`,
      "--secret",
      appSecret,
      "--token",
      readToken,
      "--json",
    ]);
    const sent: string[] = [];
    for (let n = 0; n < 100; n++) {
      if (n === 33 || n === 66) {
        // Cut every proxied connection (events may be in flight), let the CLI fail to
        // reconnect once, then come back.
        await until(() => app.requests.length >= n - 5, `${n - 5} events at the app`);
        await proxy.cut();
        await new Promise((resolve) => setTimeout(resolve, 300));
        await proxy.restore();
      }
      sent.push(await send(n));
    }
    await until(() => app.requests.length >= 100, "100 events at the app");
    await stop(cli);
    const got = app.requests.map((r) => r.headers["hookinbox-event-id"]);
    expect(got.length).toBe(100);
    expect(new Set(got).size).toBe(100);
    expect(got).toEqual(sent);
    // Signed as the gateway signs destinations: the app's own Standard Webhooks library verifies.
    const verifier = new Webhook(appSecret);
    for (const request of app.requests) {
      expect(() => verifier.verify(request.body, request.headers)).not.toThrow();
      expect(request.headers["webhook-id"]).toBe(`${request.headers["hookinbox-event-id"]}:listen`);
      expect(request.headers["hookinbox-source"]).toBe("standard");
    }
    // Two reconnects were needed, and each printed line names one event and the app's 200.
    expect(cli.output().stderr.match(/resumed/g)?.length).toBe(2);
    const lines = cli
      .output()
      .stdout.trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { id: string; status: number });
    expect(lines.map((l) => l.id)).toEqual(sent);
    expect(lines.every((l) => l.status === 200)).toBe(true);
  });

  it("--since re-sends stored events with the provider's headers, --type filters, --replay sends one, and the gateway's deliveries stay as they were", async () => {
    const paid = [await send(1000, "order.paid"), await send(1001, "order.paid")];
    await send(1002, "user.created");
    const total = (await api("/api/events?limit=500")).items.length;
    await until(() => sink.requests.length >= total, "every event at the gateway's destination");
    const before = await settledDeliveries(total);
    expect(before.length).toBe(total);
    expect(before.every((d) => d.status === "done" && d.attempts === 1)).toBe(true);

    const local = await startReceiver();
    try {
      const cli = await listen([
        "--gateway",
        gateway.url,
        "--forward-to",
        local.url,
        "--provider-headers",
        "--since",
        "1h",
        "--source",
        "standard",
        "--type",
        "order.paid",
        "--token",
        readToken,
      ]);
      await until(() => local.requests.length >= 2, "the two stored order.paid events");
      await send(1003, "user.created");
      const third = await send(1004, "order.paid");
      await until(() => local.requests.length >= 3, "the new order.paid event");
      await stop(cli);
      // The provider's own signature and the raw body, as the provider sent them.
      const provider = new Webhook(secrets.standard);
      expect(local.requests.map((r) => provider.verify(r.body, r.headers))).toEqual([
        { type: "order.paid", n: 1000 },
        { type: "order.paid", n: 1001 },
        { type: "order.paid", n: 1004 },
      ]);
      expect(local.requests.every((r) => r.headers["hookinbox-event-id"] === undefined)).toBe(true);
      const line = /^\d\d:\d\d:\d\d {2}standard {2}order\.paid {2}(evt_\w+) {2}→ 200 {2}\d+ ms$/;
      const printed = cli.output().stdout.trim().split("\n");
      expect(printed.map((l) => line.exec(l)?.[1])).toEqual([...paid, third]);

      const replay = await runCli([
        "listen",
        "--gateway",
        gateway.url,
        "--forward-to",
        local.url,
        "--secret",
        appSecret,
        "--replay",
        paid[0]!,
        "--json",
        "--token",
        readToken,
      ]);
      expect(replay.code).toBe(0);
      expect(JSON.parse(replay.stdout)).toMatchObject({ id: paid[0], status: 200 });
      expect(local.requests.length).toBe(4);
      expect(local.requests[3]!.headers["hookinbox-replay"]).toBe("true");
      expect(
        new Webhook(appSecret).verify(local.requests[3]!.body, local.requests[3]!.headers),
      ).toEqual({
        type: "order.paid",
        n: 1000,
      });
    } finally {
      await local.close();
    }
    // Listening read: the gateway's deliveries and attempts are exactly what they were (the two
    // events sent meanwhile were delivered once each, like any other).
    await until(() => sink.requests.length >= total + 2, "the two new events at the destination");
    const after = await settledDeliveries(total + 2);
    expect(after.filter((d) => before.some((b) => b.id === d.id))).toEqual(before);
    expect(sink.requests.length).toBe(total + 2);
  });

  it("prints a hostile event type escaped, in text and JSON", async () => {
    const type = "order.paid\u001b[2J\u202e\r\nFORGED";
    const id = await send(2000, type);
    const local = await startReceiver();
    try {
      for (const json of [false, true]) {
        const out = await runCli([
          "listen",
          "--gateway",
          gateway.url,
          "--forward-to",
          local.url,
          "--provider-headers",
          "--replay",
          id,
          "--token",
          readToken,
          ...(json ? ["--json"] : []),
        ]);
        expect(out.code).toBe(0);
        expect(controls.test(out.stdout)).toBe(false);
        expect(/^FORGED/m.test(out.stdout)).toBe(false);
        if (json) expect((JSON.parse(out.stdout) as { type: string }).type).toBe(type);
        else expect(out.stdout).toContain("order.paid\\x1b[2J\\u202e\\x0d\\x0aFORGED");
      }
      expect(local.requests.length).toBe(2);
    } finally {
      await local.close();
    }
  });

  it("errors are one line with a code: bad flags, a wrong token, an unreachable gateway, an unknown event", async () => {
    const base = ["listen", "--forward-to", "http://127.0.0.1:9/x", "--provider-headers"];
    const noGateway = await runCli([...base, "--token", readToken]);
    expect(noGateway.code).toBe(2);
    expect(noGateway.stderr).toBe(
      "hookinbox: HOOKINBOX_USAGE: Invalid command line: --gateway <url> is required (see hookinbox listen --help)\n",
    );
    const noSigning = await runCli([
      "listen",
      "--gateway",
      gateway.url,
      "--forward-to",
      "http://127.0.0.1:9/x",
      "--token",
      readToken,
    ]);
    expect(noSigning.code).toBe(2);
    expect(noSigning.stderr).toMatch(
      /^hookinbox: HOOKINBOX_USAGE: Invalid command line: pass --secret whsec_… /,
    );
    const wrong = await runCli([...base, "--gateway", gateway.url, "--token", "not-the-token"]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^hookinbox: HOOKINBOX_ADMIN_UNAUTHORIZED: .*\n$/);
    const closed = `http://127.0.0.1:${await freePort()}`;
    const down = await runCli([...base, "--gateway", closed, "--token", readToken]);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^hookinbox: HOOKINBOX_LISTEN_UNREACHABLE: .*ECONNREFUSED.*\n$/);
    const fromEnv = await runCli([...base, "--gateway", gateway.url, "--replay", "evt_nope"], {
      HOOKINBOX_ADMIN_TOKEN: readToken,
    });
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.stderr).toMatch(/^hookinbox: HOOKINBOX_EVENT_NOT_FOUND: /);
  });
});

/** A GET on the admin API with the admin token. */
async function api(path: string): Promise<any> {
  const response = await fetch(`${gateway.url}${path}`, {
    headers: { authorization: `Bearer ${testAdminToken}` },
  });
  expect(response.status).toBe(200);
  return response.json();
}

interface DeliveryRow {
  id: string;
  status: string;
  attempts: number;
}

/** Every delivery, once `count` of them exist and none is still pending or running. */
async function settledDeliveries(count: number): Promise<DeliveryRow[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const rows: DeliveryRow[] = (await api("/api/deliveries?limit=500")).items;
    if (rows.length === count && rows.every((d) => d.status === "done")) return rows;
    if (Date.now() > deadline) throw new Error("deliveries did not settle");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
