import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testAdminToken } from "../helpers/admin-token.ts";
import { type GatewayProcess, spawnCommand, spawnGateway } from "../helpers/gateway-process.ts";
import { type Receiver, startReceiver } from "../helpers/receiver.ts";
import { secrets, standardRequest } from "../helpers/signers.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";
import { tempDir } from "../helpers/temp.ts";

// `hookinbox listen` against a real gateway (a child process) through a TCP proxy the test cuts,
// forwarding to a real node:http app on loopback: 100 events while the stream is cut twice reach
// the app once each, in the order the gateway accepted them, signed as the gateway signs.

const readToken = "listen-read-token-3b9e1f7a0c5d2e84b6";
/** The app's Standard Webhooks secret (what `--secret` signs with). */
const appSecret = "whsec_dGhlLWxvY2FsLWFwcHMtc2VjcmV0LWtleS0wMQ==";

let tmp: ReturnType<typeof tempDir>;
let gateway: GatewayProcess;
let proxy: TcpProxy;
const running: GatewayProcess[] = [];

beforeAll(async () => {
  tmp = tempDir();
  gateway = await spawnGateway(tmp.dir, {
    store: `sqlite:${join(tmp.dir, "listen.db")}`,
    sources: { standard: { provider: "standard-webhooks", secrets: [secrets.standard] } },
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
});
