import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import {
  providerSamples,
  sampleKeyFetcher,
  sampleSourceConfig,
} from "../../src/testing/samples/index.ts";
import { testAdminToken } from "../helpers/admin-token.ts";
import { runCli } from "../helpers/cli-capture.ts";
import { tempDir } from "../helpers/temp.ts";

// `hookinbox send <provider> --to URL`: every provider's sample, sent by the real CLI code over
// loopback, is accepted by a hookinbox source of that provider (one stored event each), every
// handshake is answered, and --times/--parallel send exactly N requests for one event.

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

const cli = runCli;

const tmp = tempDir();
let gateway: Gateway;
let base: string;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const sources = Object.fromEntries(
    [...providerSamples.values()].map((sample) => [
      sample.provider,
      sampleSourceConfig(sample, sample.exampleSecret, `${base}/webhooks/${sample.provider}`),
    ]),
  );
  gateway = await startGateway(
    { store: `sqlite:${join(tmp.dir, "send.db")}`, sources },
    {
      env: {},
      port,
      host: "127.0.0.1",
      adminToken: testAdminToken,
      // SNS, Pub/Sub, Plaid and PayPal samples sign with a test key: serve its public half.
      keyFetcher: sampleKeyFetcher((sample) => sample.exampleSecret),
    },
  );
});

afterAll(async () => {
  await gateway?.close();
  tmp.cleanup();
});

const events = async (source: string) =>
  (await gateway.inbox.store.listEvents({ source, limit: 100 })).items.length;
const receipts = async (source: string) =>
  (await gateway.inbox.store.listReceipts({ source, limit: 500 })).items;

describe("hookinbox send <provider> --to URL", () => {
  it.each([...providerSamples.values()])(
    "$provider: the sample is accepted and stored once; its handshake is answered",
    async (sample) => {
      const to = `${base}/webhooks/${sample.provider}`;
      const sent = await cli(["send", sample.provider, "--to", to, "--json"], {
        HOOKINBOX_SECRET: sample.exampleSecret,
      });
      expect(sent.stderr).toBe("");
      const report = JSON.parse(sent.stdout) as { ok: boolean; sends: Array<{ status: number }> };
      expect(report.sends.map((s) => s.status)).toEqual([200]);
      expect([sent.code, report.ok]).toEqual([0, true]);
      expect(await events(sample.provider)).toBe(1);
      if (sample.handshakeType) {
        const handshake = await cli([
          "send",
          sample.provider,
          "--to",
          to,
          "--secret",
          sample.exampleSecret,
          "--type",
          sample.handshakeType,
        ]);
        expect(handshake.stdout).toContain("handshake answered correctly");
        expect(handshake.code).toBe(0);
        expect(await events(sample.provider)).toBe(1);
      }
    },
  );

  it("--times 25 --parallel 10 sends exactly 25 requests, all 2xx, for one stored event", async () => {
    const to = `${base}/webhooks/stripe`;
    const before = await events("stripe");
    const beforeReceipts = (await receipts("stripe")).length;
    const sent = await cli([
      "send",
      "stripe",
      "--to",
      to,
      "--secret",
      providerSamples.get("stripe")!.exampleSecret,
      "--id",
      "evt_send_times",
      "--times",
      "25",
      "--parallel",
      "10",
    ]);
    expect(sent.code).toBe(0);
    expect(sent.stdout.match(/^send \d+\/25 {2}200 /gm)).toHaveLength(25);
    expect(sent.stdout).toContain("25 sent: 25 × 2xx");
    expect(await events("stripe")).toBe(before + 1);
    const all = await receipts("stripe");
    expect(all.length - beforeReceipts).toBe(25);
    expect(all.filter((r) => r.duplicate)).toHaveLength(24);
  });

  it("--replay-of resends an event id with a fresh signature: a duplicate, not a new event", async () => {
    const to = `${base}/webhooks/slack`;
    const secret = providerSamples.get("slack")!.exampleSecret;
    const first = await cli([
      "send",
      "slack",
      "--to",
      to,
      "--secret",
      secret,
      "--id",
      "EvREPLAY01",
    ]);
    const before = await events("slack");
    const again = await cli([
      "send",
      "slack",
      "--to",
      to,
      "--secret",
      secret,
      "--replay-of",
      "EvREPLAY01",
    ]);
    expect([first.code, again.code]).toEqual([0, 0]);
    expect(await events("slack")).toBe(before);
  });

  it("--private-key FILE signs a fetched-key provider's sample (SNS) with the key in the file", async () => {
    const keyFile = join(tmp.dir, "sns-test-key.pem");
    writeFileSync(keyFile, providerSamples.get("sns")!.exampleSecret);
    const before = await events("sns");
    const sent = await cli([
      "send",
      "sns",
      "--to",
      `${base}/webhooks/sns`,
      "--private-key",
      keyFile,
    ]);
    expect([sent.code, sent.stderr]).toEqual([0, ""]);
    expect(sent.stdout).toMatch(/^send 1\/1 {2}200 /m);
    expect(await events("sns")).toBe(before + 1);
    const missing = await cli([
      "send",
      "sns",
      "--to",
      base,
      "--private-key",
      join(tmp.dir, "nope.pem"),
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      /^hookinbox: HOOKINBOX_USAGE: .*--private-key .*nope\.pem: ENOENT/,
    );
  });

  it("a wrong secret is refused by the receiver and the command exits 1", async () => {
    const sent = await cli([
      "send",
      "github",
      "--to",
      `${base}/webhooks/github`,
      "--secret",
      "wrong",
    ]);
    expect(sent.code).toBe(1);
    expect(sent.stdout).toMatch(/^send 1\/1 {2}401 /m);
  });

  it("the configured-source form (`send <source> --url`) still signs with the source's secret", async () => {
    const config = join(tmp.dir, "hookinbox.config.json");
    const secret = providerSamples.get("stripe")!.exampleSecret;
    writeFileSync(
      config,
      JSON.stringify({ sources: { stripe: { provider: "stripe", secrets: [secret] } } }),
    );
    const before = await events("stripe");
    const sent = await cli([
      "send",
      "stripe",
      "--config",
      config,
      "--url",
      base,
      "--type",
      "invoice.paid",
    ]);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/^200 /);
    expect(await events("stripe")).toBe(before + 1);
  });

  it("an unknown provider and a missing secret are usage errors with a code", async () => {
    const unknown = await cli(["send", "nope", "--to", base, "--secret", "s"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(
      /^hookinbox: HOOKINBOX_USAGE: .*no sample for provider "nope"; known: stripe, github/,
    );
    const noSecret = await cli(["send", "stripe", "--to", base]);
    expect(noSecret.code).toBe(2);
    expect(noSecret.stderr).toContain("HOOKINBOX_SECRET");
  });
});
