import { readFileSync } from "node:fs";
import { type ClientRequest, request } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { testAdminToken } from "../helpers/admin-token.ts";
import { type GatewayProcess, spawnGateway } from "../helpers/gateway-process.ts";
import { secrets, standardRequest } from "../helpers/signers.ts";
import { tempDir } from "../helpers/temp.ts";

// 100 idle listeners on GET /api/events/stream of a gateway running as a child process: its
// resident memory (VmRSS) grows by less than 50 MB, every listener gets a new event, and the
// 101st is refused with 503 HOOKINBOX_STREAM_LIMITED (admin.maxStreams: 100).

const listeners = 100;
let tmp: ReturnType<typeof tempDir>;
let gateway: GatewayProcess;

beforeAll(async () => {
  tmp = tempDir();
  gateway = await spawnGateway(tmp.dir, {
    store: `sqlite:${join(tmp.dir, "streams.db")}`,
    sources: { standard: { provider: "standard-webhooks", secrets: [secrets.standard] } },
    admin: { token: testAdminToken, maxStreams: listeners },
    http: { maxConnectionsPerAddress: false },
  });
});

afterAll(async () => {
  gateway?.child.kill("SIGTERM");
  await gateway?.exited();
  tmp?.cleanup();
});

/** The gateway process's resident set size in bytes, from /proc. */
function rssBytes(): number {
  const status = readFileSync(`/proc/${gateway.child.pid}/status`, "utf8");
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  return Number(kb) * 1024;
}

/** An SSE listener on its own connection; `text()` is what it received so far. */
function listen(): Promise<{ req: ClientRequest; status: number; text(): string }> {
  return new Promise((resolve, reject) => {
    let text = "";
    const req = request(`${gateway.url}/api/events/stream`, {
      agent: false,
      headers: { authorization: `Bearer ${testAdminToken}` },
    });
    req.on("response", (res) => {
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        const first = text === "";
        text += chunk;
        if (first) resolve({ req, status: res.statusCode ?? 0, text: () => text });
      });
      res.on("error", () => undefined);
    });
    req.on("error", reject);
    req.end();
  });
}

async function send(n: number): Promise<string> {
  const signed = standardRequest(`msg_idle_${n}`, JSON.stringify({ type: "user.created", n }));
  const response = await fetch(`${gateway.url}/webhooks/standard`, {
    method: "POST",
    headers: signed.headers,
    body: signed.body,
  });
  return ((await response.json()) as { eventId: string }).eventId;
}

it("holds 100 idle listeners within 50 MB of RSS, each gets a new event, the 101st is refused", async () => {
  // Warm up: the stream's code paths and the hub run once before the baseline.
  const warm = await listen();
  await send(0);
  warm.req.destroy();
  await new Promise((resolve) => setTimeout(resolve, 200));
  const before = rssBytes();
  const open = [];
  for (let i = 0; i < listeners; i++) open.push(await listen());
  expect(open.every((l) => l.status === 200)).toBe(true);
  const over = await fetch(`${gateway.url}/api/events/stream`, {
    headers: { authorization: `Bearer ${testAdminToken}` },
  });
  expect(over.status).toBe(503);
  expect(((await over.json()) as { error: { code: string } }).error.code).toBe(
    "HOOKINBOX_STREAM_LIMITED",
  );
  const after = rssBytes();
  const growthMb = (after - before) / 1024 / 1024;
  console.log(
    `RSS ${Math.round(before / 1024 / 1024)} MB → ${Math.round(after / 1024 / 1024)} MB with ${listeners} listeners (+${growthMb.toFixed(1)} MB)`,
  );
  expect(growthMb).toBeLessThan(50);
  // Idle, not dead: one new event reaches every listener once.
  const id = await send(1);
  const deadline = Date.now() + 30_000;
  while (open.some((l) => !l.text().includes(id)) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 50));
  expect(open.filter((l) => l.text().split(`"id":"${id}"`).length === 2).length).toBe(listeners);
  for (const listener of open) listener.req.destroy();
});
