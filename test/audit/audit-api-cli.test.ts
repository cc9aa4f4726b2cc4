import { readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseAuditKey } from "../../src/audit/audit-key.ts";
import { verifyConsistency, verifyInclusion } from "../../src/audit/merkle.ts";
import { runRetention } from "../../src/audit/retention.ts";
import {
  parseTreeHeadJson,
  publicKeyFromHex,
  publicKeyHex,
  verifyTreeHead,
} from "../../src/audit/tree-head.ts";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import { openStore } from "../../src/store/open-store.ts";
import { testAdminToken } from "../helpers/admin-token.ts";
import { runCli } from "../helpers/cli-capture.ts";
import { stripeRequest, testSources } from "../helpers/signers.ts";
import { storeFactories, type TestStore } from "../helpers/stores.ts";
import { eventsOnly } from "./opened-store.ts";

// The audit log over real HTTP and the real CLI, on a SQLite file and on PostgreSQL: the key
// (made on first start beside the SQLite file; from HOOKINBOX_AUDIT_KEY on PostgreSQL) is
// served, heads verify with it and reach the witness file and a loopback witness URL once each,
// proofs verify against heads, `audit verify` against a saved head passes until a row is edited,
// then names it, and an expired event answers 410 while its proof is still served.

const token = testAdminToken;
const seed = "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb";
let gateway: Gateway;
let db: TestStore;
let witnessFile: string;
let witness: Server;
/** The bodies POSTed to the witness URL, parsed, in arrival order. */
let witnessed: unknown[];

async function startWitness(): Promise<string> {
  witnessed = [];
  witness = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      expect(request.method).toBe("POST");
      expect(request.headers["content-type"]).toBe("application/json");
      witnessed.push(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => witness.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(witness.address() as AddressInfo).port}/heads`;
}

/** The key's source per store: the generated key file on SQLite, the variable on PostgreSQL. */
const envOf = (kind: string): Record<string, string> =>
  kind === "postgres" ? { HOOKINBOX_AUDIT_KEY: seed } : {};

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

const stores = storeFactories().filter((f) => f.name !== "pgbouncer");

describe.each(stores)("audit API and CLI ($name)", ({ open, kind }) => {
  beforeEach(async () => {
    db = await open();
    witnessFile = join(db.dir, "witness.jsonl");
    gateway = await startGateway(
      {
        store: db.url,
        sources: testSources,
        audit: {
          witness: { file: witnessFile, url: await startWitness(), allowPrivateNetworks: true },
        },
      },
      // env: DATABASE_URL, when the test run sets it, must not move this store elsewhere.
      { port: 0, adminToken: token, env: envOf(kind) },
    );
  });

  afterEach(async () => {
    await gateway.close();
    await new Promise((resolve) => witness.close(resolve));
    await db.cleanup();
  });

  it("serves the key, signed heads, inclusion and consistency proofs that verify", async () => {
    const key = await api("/api/audit/key");
    expect(key.status).toBe(200);
    expect(key.body.algorithm).toBe("Ed25519");
    if (kind === "sqlite") {
      expect(statSync(join(db.dir, "audit-ed25519.pem")).mode & 0o777).toBe(0o600);
    } else {
      expect(key.body.publicKey).toBe(publicKeyHex(parseAuditKey(seed, "test")));
    }
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
    // And POSTed to the witness URL, signed, once each.
    expect(witnessed).toEqual([first.body, second.body]);
    // A duplicate delivery is a receipt, with a receipt leaf of its own.
    await post("evt_audit_0");
    const third = await api("/api/audit/head", "POST");
    expect(third.body.size).toBe(12);
    expect(witnessed).toEqual([first.body, second.body, third.body]);
    for (const head of witnessed)
      expect(verifyTreeHead(parseTreeHeadJson(head)!, trusted)).toBe(true);
  });

  it("audit verify passes against a saved head and names the first edited row", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 9; i++) ids.push(await post(`evt_v_${i}`));
    const config = join(db.dir, "hookinbox.config.json");
    writeFileSync(config, JSON.stringify({ store: db.url, retention: { payloads: 0 } }));
    const env = envOf(kind);
    const cli = (args: string[]) => runCli([...args, "--config", config], env);
    const head = await cli(["audit", "head"]);
    expect(head.code).toBe(0);
    const headFile = join(db.dir, "head.json");
    writeFileSync(headFile, head.stdout);
    expect(JSON.parse(head.stdout).size).toBe(9);

    const ok = await cli(["audit", "verify", "--head", headFile]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^ok: 9 leaves match their events; the first 9 hash to root/);
    // This config names no source: the derived columns cannot be re-derived, said distinctly.
    expect(ok.stdout.trim().split("\n").slice(1)).toEqual([
      "cannot re-derive: source stripe not configured (9 events: their leaves are checked, their type, ordering key, occurred-at, version and dedup key are not)",
    ]);

    // Retention empties every payload (no event here has a delivery); the log still verifies.
    const dry = await cli(["retention", "run", "--dry-run"]);
    expect(dry.stdout).toMatch(/^would purge 9 payloads, /);
    const run = await cli(["retention", "run"]);
    expect(run.stdout).toMatch(/^purged 9 payloads, /);
    expect((await api(`/api/events/${ids[4]}`)).body.purgedAt).toEqual(expect.any(String));
    const after = await cli(["audit", "verify", "--head", headFile]);
    expect(after.code).toBe(0);
    expect(after.stdout.trim().split("\n").at(-1)).toBe(
      "covered only by their digests (payload purged by retention, not re-derived): leaves 0-8",
    );

    const prove = await cli(["audit", "prove", ids[4]!]);
    expect(JSON.parse(prove.stdout)).toMatchObject({ eventId: ids[4], leafIndex: 4, treeSize: 9 });
    const consistency = await cli(["audit", "consistency", "--from", "3"]);
    expect(JSON.parse(consistency.stdout)).toMatchObject({ from: 3, to: 9 });

    await db.rows("UPDATE events SET received_at = received_at + 1 WHERE id = ?", [ids[5]]);
    const bad = await cli(["audit", "verify", "--head", headFile]);
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim().split("\n").at(-1)).toBe(
      `hookinbox: HOOKINBOX_AUDIT_VERIFY_FAILED: The stored log does not match the trusted tree head: leaf 5 ${ids[5]}: the event as stored does not match its leaf`,
    );
    const forged = { ...JSON.parse(head.stdout), size: 8 };
    writeFileSync(headFile, JSON.stringify(forged));
    const refused = await cli(["audit", "verify", "--head", headFile]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^hookinbox: HOOKINBOX_AUDIT_HEAD_INVALID: /);
  });

  it("answers 410 HOOKINBOX_EVENT_EXPIRED for an expired event and still serves its proof", async () => {
    const ids = [await post("evt_old_0"), await post("evt_old_1")];
    await api("/api/audit/head", "POST");
    // Retention as if run 400 days from now, with retention.events 365d: both events expire.
    const store = openStore(db.url);
    const day = 86_400_000;
    const swept = await runRetention(store, eventsOnly(365 * day), {
      now: Date.now() + 400 * day,
      dryRun: false,
    });
    await store.close();
    expect(swept.events).toBe(2);
    const gone = await api(`/api/events/${ids[0]}`);
    expect(gone.status).toBe(410);
    expect(gone.body.error.code).toBe("HOOKINBOX_EVENT_EXPIRED");
    const never = await api("/api/events/evt_01J0000000000000000000000Z");
    expect(never.status).toBe(404);
    expect(never.body.error.code).toBe("HOOKINBOX_EVENT_NOT_FOUND");
    const proof = await api(`/api/audit/proof/${ids[1]}`);
    expect(proof.status).toBe(200);
    expect(proof.body).toMatchObject({ eventId: ids[1], leafIndex: 1, treeSize: 2 });
  });
});
