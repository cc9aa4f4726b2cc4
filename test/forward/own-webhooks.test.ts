// Boot refusal of a destination that is the gateway's own webhook listener: a real gateway on a
// real port refuses to start (and leaves nothing listening); one URL away, it starts.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import { createInbox } from "../../src/inbox.ts";
import { freePort } from "../helpers/free-port.ts";
import { tempDir } from "../helpers/temp.ts";
import { destination } from "./forward-env.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function config(url: string, http: Record<string, unknown> = {}) {
  const tmp = tempDir();
  cleanups.push(() => tmp.cleanup());
  return {
    store: `sqlite:${join(tmp.dir, "own.db")}`,
    http,
    sources: { loop: { provider: "standard-webhooks", secrets: [destination("").secret] } },
    destinations: { back: destination(url) },
    routes: [{ from: "loop", to: "back" }],
  };
}

async function refusal(start: () => Promise<Gateway>) {
  try {
    const gateway = await start();
    cleanups.push(() => gateway.close());
    return null;
  } catch (error) {
    return error as { code: string; message: string };
  }
}

describe("a destination that is the gateway's own webhook listener", () => {
  it("is refused at boot with HOOKINBOX_DESTINATION_LOOP, one line, nothing left listening", async () => {
    const port = await freePort();
    const urls = [
      `http://127.0.0.1:${port}/webhooks/loop`,
      `http://localhost:${port}/webhooks/loop`,
      `http://127.0.0.2:${port}/webhooks/other`,
      `http://[::1]:${port}/webhooks/loop`,
      `http://[::ffff:127.0.0.1]:${port}/webhooks/loop`,
      `http://0.0.0.0:${port}/webhooks/loop/`,
    ];
    for (const url of urls) {
      const error = await refusal(() => startGateway(config(url), { env: {}, port }));
      expect(error?.code, url).toBe("HOOKINBOX_DESTINATION_LOOP");
      expect(error!.message).toContain("destinations.back.url");
      expect(error!.message).not.toContain("\n");
      // The listener was closed: nothing answers on the port.
      await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    }
  });

  it("is refused through http.publicUrl, in a library inbox too", async () => {
    const publicUrl = "https://hooks.example.com/inbox";
    for (const url of [
      "https://hooks.example.com/inbox/webhooks/loop",
      "https://hooks.example.com:443/webhooks/loop",
    ]) {
      let code: string | undefined;
      try {
        createInbox(config(url, { publicUrl }) as never, { env: {} });
      } catch (error) {
        code = (error as { code: string }).code;
      }
      expect(code, url).toBe("HOOKINBOX_DESTINATION_LOOP");
    }
  });

  it("another port, another path or another host still starts", async () => {
    const port = await freePort();
    for (const url of [
      `http://127.0.0.1:${port}/hooks/loop`,
      `http://127.0.0.1:${port + 1 === 65536 ? port - 1 : port + 1}/webhooks/loop`,
      `http://192.0.2.10:${port}/webhooks/loop`,
    ]) {
      const error = await refusal(() => startGateway(config(url), { env: {}, port }));
      expect(error, url).toBeNull();
      await cleanups.pop()!();
    }
  });
});
