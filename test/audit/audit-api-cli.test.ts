import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { verifyConsistency, verifyInclusion } from "../../src/audit/merkle.ts";
import { parseTreeHeadJson, publicKeyFromHex, verifyTreeHead } from "../../src/audit/tree-head.ts";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import { runCli } from "../helpers/cli-capture.ts";
import { stripeRequest, testSources } from "../helpers/signers.ts";
import { tempDir } from "../helpers/temp.ts";

// The audit log over real HTTP and the real CLI, on a SQLite file: the key made on first start
// is served, heads verify with it, proofs verify against heads, and `audit verify` against a
// saved head passes until a row is edited, then names it.

const token = "test-admin-token";
let gateway: Gateway;
let dir: string;
let cleanup: () => void;
let witnessFile: string;

beforeEach(async () => {
  const tmp = tempDir();
  dir = tmp.dir;
  cleanup = tmp.cleanup;
  witnessFile = join(dir, "witness.jsonl");
  gateway = await startGateway(
    {
      store: `sqlite:${join(dir, "hookinbox.db")}`,
      sources: testSources,
      audit: { witness: { file: witnessFile } },
    },
    // env {}: DATABASE_URL, when the test run sets it, must not move this store to PostgreSQL.
    { port: 0, adminToken: token, env: {} },
  );
});

afterEach(async () => {
  await gateway.close();
  cleanup();
});

async function api(path: string, method = "GET") {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: response.status, body: (await response.json()) as any };
}

async function post(id: string) {
  const { body, headers } = stripeRequest(id);
  const response = await fetch(`${gateway.url}/webhooks/stripe`, { method: "POST", headers, body });
  expect(response.status).toBe(200);
  return ((await response.json()) as { eventId: string }).eventId;
}

describe("audit API and CLI (sqlite)", () => {
  it("serves the key, signed heads, inclusion and consistency proofs that verify", async () => {
    const keyFile = join(dir, "audit-ed25519.pem");
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const key = await api("/api/audit/key");
    expect(key.status).toBe(200);
    expect(key.body.algorithm).toBe("Ed25519");
    const trusted = publicKeyFromHex(key.body.publicKey);

    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await post(`evt_audit_${i}`));
    const first = await api("/api/audit/head", "POST");
    expect(first.status).toBe(201);
    expect(first.body.size).toBe(6);
    for (let i = 6; i < 11; i++) ids.push(await post(`evt_audit_${i}`));
    const second = await api("/api/audit/head", "POST");
    expect(second.body.size).toBe(11);
    const latest = await api("/api/audit/head");
    expect(latest.body).toEqual(second.body);
    const headA = parseTreeHeadJson(first.body)!;
    const headB = parseTreeHeadJson(second.body)!;
    expect(verifyTreeHead(headA, trusted)).toBe(true);
    expect(verifyTreeHead(headB, trusted)).toBe(true);
    expect(verifyTreeHead({ ...headB, size: 10 }, trusted)).toBe(false);

    for (const [i, id] of ids.entries()) {
      const proof = await api(`/api/audit/proof/${id}`);
      expect(proof.status).toBe(200);
      expect(proof.body.leafIndex).toBe(i);
      expect(proof.body.head).toEqual(second.body);
      const path = (proof.body.proof as string[]).map((h) => Buffer.from(h, "hex"));
      const leaf = Buffer.from(proof.body.leafHash, "hex");
      expect(verifyInclusion(i, 11, leaf, path, headB.root)).toBe(true);
    }
    const early = await api(`/api/audit/proof/${ids[8]}?size=6`);
    expect(early.status).toBe(404);
    expect(early.body.error.code).toBe("HOOKINBOX_AUDIT_NOT_IN_LOG");
    const consistency = await api("/api/audit/consistency?from=6");
    expect(consistency.body.to).toBe(11);
    const cpath = (consistency.body.proof as string[]).map((h) => Buffer.from(h, "hex"));
    expect(verifyConsistency(6, 11, headA.root, headB.root, cpath)).toBe(true);
    expect((await api("/api/audit/consistency?from=12")).body.error.code).toBe(
      "HOOKINBOX_QUERY_INVALID",
    );
    // Each head was appended to the witness file as one JSON line.
    const lines = readFileSync(witnessFile, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([first.body, second.body]);
    // A duplicate delivery is a receipt, not a leaf.
    await post("evt_audit_0");
    expect((await api("/api/audit/head", "POST")).body.size).toBe(11);
  });

  it("audit verify passes against a saved head and names the first edited row", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 9; i++) ids.push(await post(`evt_v_${i}`));
    const config = join(dir, "hookinbox.config.json");
    writeFileSync(
      config,
      JSON.stringify({ store: `sqlite:${join(dir, "hookinbox.db")}`, retention: { payloads: 0 } }),
    );
    const head = await runCli(["audit", "head", "--config", config]);
    expect(head.code).toBe(0);
    const headFile = join(dir, "head.json");
    writeFileSync(headFile, head.stdout);
    expect(JSON.parse(head.stdout).size).toBe(9);

    const ok = await runCli(["audit", "verify", "--config", config, "--head", headFile]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^ok: 9 leaves match their events; the first 9 hash to root/);

    // Retention empties every payload (no event here has a delivery); the log still verifies.
    const dry = await runCli(["retention", "run", "--dry-run", "--config", config]);
    expect(dry.stdout).toMatch(/^would purge 9 payloads, /);
    const run = await runCli(["retention", "run", "--config", config]);
    expect(run.stdout).toMatch(/^purged 9 payloads, /);
    expect((await api(`/api/events/${ids[4]}`)).body.purgedAt).toEqual(expect.any(String));
    const after = await runCli(["audit", "verify", "--config", config, "--head", headFile]);
    expect(after.code).toBe(0);

    const prove = await runCli(["audit", "prove", ids[4]!, "--config", config]);
    expect(JSON.parse(prove.stdout)).toMatchObject({ eventId: ids[4], leafIndex: 4, treeSize: 9 });
    const consistency = await runCli(["audit", "consistency", "--from", "3", "--config", config]);
    expect(JSON.parse(consistency.stdout)).toMatchObject({ from: 3, to: 9 });

    const db = new Database(join(dir, "hookinbox.db"));
    db.prepare("UPDATE events SET received_at = received_at + 1 WHERE id = ?").run(ids[5]);
    db.close();
    const bad = await runCli(["audit", "verify", "--config", config, "--head", headFile]);
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim().split("\n").at(-1)).toBe(
      `hookinbox: HOOKINBOX_AUDIT_VERIFY_FAILED: The stored log does not match the trusted tree head: leaf 5 ${ids[5]}: the event as stored does not match its leaf`,
    );
    const forged = { ...JSON.parse(head.stdout), size: 8 };
    writeFileSync(headFile, JSON.stringify(forged));
    const refused = await runCli(["audit", "verify", "--config", config, "--head", headFile]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^hookinbox: HOOKINBOX_AUDIT_HEAD_INVALID: /);
  });
});
