import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { loadavg } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { spawnGateway } from "../helpers/gateway-process.ts";
import { standardRequest, testSources } from "../helpers/signers.ts";
import { repoRoot, tempDir } from "../helpers/temp.ts";

// Slow-body attacks with real sockets against a real `hookinbox start` process on its default
// connection limits (http.maxConnections 1000): while 1,000 slow-body connections (headers, then
// one byte a second, reopened as soon as they close) run for 20 s, at least 99% of 240 correctly
// signed webhooks from another address are answered 2xx (each has 10 s, the client's timeout),
// the gateway's RSS stays under 300 MB, and nothing a slow body sent is stored. How many were
// answered within 1 s (the latency goal) is printed, not asserted: the suite holds no timing
// threshold, and the attacker, the senders and the gateway share this machine's two cores with
// the rest of the suite. Traffic stays on loopback and ends with the test.

const tmp = tempDir();
afterAll(() => tmp.cleanup());

// 20 s holds two full rounds of the default minimum body rate (5 s of grace, then 240 bytes/s
// over 5 s): every slow connection is cut and reopened at least twice while the webhooks arrive.
// The 240 webhooks (one each 83 ms) keep the 99% a share of the same count as the 60 s run had.
const attackMs = 20_000;
const webhooks = 240;
const sendEveryMs = attackMs / webhooks;

/** Resident set size of a process, in MB: the current one, or the peak (VmHWM). */
function rssMb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

/** One signed webhook on a fresh connection from 127.0.0.1: its status (null: failed) and ms. */
function sendSigned(url: string, id: string): Promise<{ status: number | null; ms: number }> {
  const signed = standardRequest(id, JSON.stringify({ type: "user.created" }));
  const { hostname, port } = new URL(url);
  const started = performance.now();
  return new Promise((resolve) => {
    const done = (status: number | null) => resolve({ status, ms: performance.now() - started });
    const req = request(
      {
        host: hostname,
        port: Number(port),
        localAddress: "127.0.0.1",
        method: "POST",
        path: "/webhooks/standard",
        agent: false,
        headers: { ...signed.headers, "content-length": Buffer.byteLength(signed.body) },
        timeout: 10_000,
      },
      (res) => {
        res.resume();
        res.on("end", () => done(res.statusCode ?? null));
        res.on("error", () => done(null));
      },
    );
    req.on("timeout", () => req.destroy());
    req.on("error", () => done(null));
    req.end(signed.body);
  });
}

/** CPU seconds a process has used (user + system, from /proc/<pid>/stat; 100 ticks a second). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function underAttack(name: string, addresses: string[]) {
  const dbPath = join(tmp.dir, `${name}.db`);
  const gateway = await spawnGateway(
    tmp.dir,
    { store: `sqlite:${dbPath}`, sources: { standard: testSources.standard } },
    {},
    { maxOpenFiles: 4096 },
  );
  const pid = gateway.child.pid!;
  const attacker = spawn(
    process.execPath,
    [
      join(repoRoot, "test/fixtures/slow-body-attacker.mjs"),
      JSON.stringify({
        url: gateway.url,
        addresses,
        connections: 1000,
        durationMs: attackMs + 3_000,
      }),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let attackerOut = "";
  attacker.stdout!.on("data", (chunk: Buffer) => {
    attackerOut += chunk.toString();
  });
  const attackerExit = new Promise<void>((resolve) => attacker.once("exit", () => resolve()));
  let peakRss = 0;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, rssMb(pid, "VmRSS"));
  }, 500);
  try {
    // Let the 1,000 connections take their slots first.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const sends: Array<Promise<{ status: number | null; ms: number }>> = [];
    for (let i = 0; i < webhooks; i++) {
      sends.push(sendSigned(gateway.url, `msg_${name}_${i}`));
      await new Promise((resolve) => setTimeout(resolve, sendEveryMs));
    }
    const answers = await Promise.all(sends);
    await attackerExit;
    clearInterval(sampler);
    peakRss = Math.max(peakRss, rssMb(pid, "VmHWM"));
    const answered2xx = answers.filter((a) => a.status !== null && a.status < 300);
    const ok = answered2xx.filter((a) => a.ms <= 1_000);
    const sorted = answers.map((a) => (a.status === null ? Number.POSITIVE_INFINITY : a.ms));
    sorted.sort((a, b) => a - b);
    const p99 = sorted[Math.ceil(sorted.length * 0.99) - 1]!;
    const share = ok.length / answers.length;
    const cpu = cpuSeconds(pid);
    const attack = JSON.parse(attackerOut || "{}") as Record<string, number>;
    console.log(
      `${name}: ${ok.length}/${answers.length} signed webhooks 2xx within 1 s (${(share * 100).toFixed(1)}%), ${answered2xx.length} 2xx in all, p99 ${p99.toFixed(1)} ms, peak RSS ${peakRss.toFixed(1)} MB, gateway CPU ${cpu.toFixed(1)} s, load average ${loadavg()[0]!.toFixed(1)}; attacker ${JSON.stringify(attack)}`,
    );
    const stored2xx = answered2xx.length;
    gateway.child.kill("SIGTERM");
    await gateway.exited();
    const db = new Database(dbPath, { readonly: true });
    // Only the signed webhooks were stored: nothing a slow body sent.
    expect(db.prepare("SELECT count(*) AS n FROM events").get()).toEqual({ n: stored2xx });
    db.close();
    expect(answered2xx.length / answers.length).toBeGreaterThanOrEqual(0.99);
    expect(peakRss).toBeLessThan(300);
    expect(gateway.output().stderr).not.toMatch(/EMFILE|Error:/);
  } finally {
    clearInterval(sampler);
    attacker.kill("SIGKILL");
    gateway.child.kill("SIGKILL");
  }
}

describe("slow-body attack against a gateway process on its default limits", () => {
  it("1,000 slow-body connections from 127.0.0.2 for 20 s: ≥ 99% of 240 signed webhooks from 127.0.0.1 get 2xx, RSS < 300 MB", async () => {
    await underAttack("one-address", ["127.0.0.2"]);
  }, 120_000);

  it("1,000 slow-body connections from 50 addresses (127.0.0.10–59) for 20 s: ≥ 99% of 240 signed webhooks from 127.0.0.1 get 2xx, RSS < 300 MB", async () => {
    await underAttack(
      "fifty-addresses",
      Array.from({ length: 50 }, (_, i) => `127.0.0.${10 + i}`),
    );
  }, 120_000);
});
