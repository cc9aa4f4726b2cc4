// The audit witness URL gets a destination's SSRF guard and follows no redirect: real HTTP
// servers on loopback record whether they were reached.
import { generateKeyPairSync } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { treeHeads } from "../../src/audit/tree-heads.ts";
import { startGateway } from "../../src/gateway/start-gateway.ts";
import { openStore } from "../../src/store/open-store.ts";
import { type Receiver, startReceiver } from "../helpers/receiver.ts";
import { tempDir } from "../helpers/temp.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function server(respond?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const r = await startReceiver(respond);
  cleanups.push(() => r.close());
  return r;
}

/** Tree heads over a fresh SQLite store, witnessed at `url`. */
async function heads(url: string, allowPrivateNetworks?: boolean) {
  const tmp = tempDir();
  cleanups.push(() => tmp.cleanup());
  const store = openStore(`sqlite:${join(tmp.dir, "witness.db")}`);
  await store.migrate();
  cleanups.push(() => store.close());
  const { privateKey } = generateKeyPairSync("ed25519");
  const signer = treeHeads({
    store,
    key: () => privateKey,
    now: Date.now,
    witness: {
      file: null,
      url,
      ...(allowPrivateNetworks === undefined ? {} : { allowPrivateNetworks }),
    },
  });
  cleanups.push(() => signer.stop());
  return { store, signer };
}

describe("audit witness URL", () => {
  it("a loopback witness (IP literal or localhost) is refused unless allowPrivateNetworks; the head is stored either way", async () => {
    const witness = await server();
    for (const url of [witness.url, `http://localhost:${witness.port}/hooks`]) {
      const { store, signer } = await heads(url);
      const head = await signer.signNow();
      expect((await store.latestTreeHead())?.signature).toEqual(head.signature);
    }
    expect(witness.requests).toHaveLength(0);
    const { signer } = await heads(witness.url, true);
    await signer.signNow();
    expect(witness.requests).toHaveLength(1);
    expect(witness.requests[0]!.url).toBe("/hooks");
  });

  it("a 302 from the witness is not followed: the server it points at is never hit", async () => {
    const target = await server();
    const redirecting = await server(() => ({
      status: 302,
      headers: { location: `${target.url}/stolen` },
    }));
    const { signer } = await heads(redirecting.url, true);
    await signer.signNow();
    expect(redirecting.requests).toHaveLength(1);
    expect(target.requests).toHaveLength(0);
  });

  it("audit.witness.allowPrivateNetworks in the config reaches the witness; without it nothing is sent", async () => {
    const witness = await server();
    for (const allowPrivateNetworks of [false, true]) {
      const tmp = tempDir();
      cleanups.push(() => tmp.cleanup());
      const gateway = await startGateway(
        {
          store: `sqlite:${join(tmp.dir, "gateway.db")}`,
          audit: { witness: { url: witness.url, allowPrivateNetworks } },
        },
        { env: {}, port: 0 },
      );
      cleanups.push(() => gateway.close());
      await gateway.inbox.audit!.signNow();
    }
    expect(witness.requests).toHaveLength(1);
  });
});
