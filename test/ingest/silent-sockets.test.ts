import { connect, type Socket } from "node:net";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it, vi } from "vitest";
import { startGateway } from "../../src/gateway/start-gateway.ts";
import { spawnGateway } from "../helpers/gateway-process.ts";
import { postStandard } from "../helpers/post-standard.ts";
import { testSources } from "../helpers/signers.ts";
import { tempDir } from "../helpers/temp.ts";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

/** Opens a TCP connection that never sends a byte; resolves once connected. */
function silentSocket(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once("connect", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Resolves when the server closes the socket. */
const closedByServer = (socket: Socket) =>
  new Promise<void>((resolve) => {
    if (socket.destroyed) resolve();
    socket.on("error", () => undefined);
    socket.once("close", () => resolve());
  });

describe("socket hygiene", () => {
  it("closes a connection that never sends a byte after http.idleTimeout", async () => {
    const gateway = await startGateway(
      {
        store: `sqlite:${join(tmp.dir, "idle.db")}`,
        http: { idleTimeout: "300ms" },
        sources: { standard: testSources.standard },
      },
      { env: {}, port: 0 },
    );
    const socket = await silentSocket(gateway.url);
    await closedByServer(socket);
    await vi.waitFor(() => expect(gateway.connections.open()).toBe(0));
    await gateway.close();
  });

  it("500 silent sockets against a gateway limited to 256 file descriptors: real requests keep succeeding, SIGTERM exits after the drain deadline", async () => {
    const gateway = await spawnGateway(
      tmp.dir,
      {
        store: `sqlite:${join(tmp.dir, "silent.db")}`,
        http: { maxConnections: 150, idleTimeout: "5m", readTimeout: "5m", drainTimeout: "2s" },
        sources: { standard: testSources.standard },
      },
      {},
      { maxOpenFiles: 256 },
    );
    const silent: Socket[] = [];
    const closed: Array<Promise<void>> = [];
    for (let i = 0; i < 500; i++) {
      const socket = await silentSocket(gateway.url);
      silent.push(socket);
      closed.push(closedByServer(socket));
    }
    // Real senders interleaved with more silent sockets: every one is stored.
    const answers = [];
    for (let i = 0; i < 20; i++) {
      answers.push(await postStandard(gateway.url, `msg_silent_${i}`));
      const socket = await silentSocket(gateway.url);
      silent.push(socket);
      closed.push(closedByServer(socket));
    }
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(answers.filter((a) => a.json.duplicate === false)).toHaveLength(20);
    expect((await fetch(`${gateway.url}/readyz`)).status).toBe(200);

    // A request in progress (headers sent, body never finished) holds its connection past
    // SIGTERM; the drain deadline closes it and the process exits.
    const slow = await silentSocket(gateway.url);
    const slowClosed = closedByServer(slow);
    slow.write(
      "POST /webhooks/standard HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{",
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    gateway.child.kill("SIGTERM");
    const exit = await Promise.race([
      gateway.exited(),
      new Promise<"hung">((resolve) => setTimeout(() => resolve("hung"), 30_000)),
    ]);
    expect(exit).toEqual({ code: 0, signal: null });
    await slowClosed;
    await Promise.all(closed);
    expect(gateway.output().stderr).not.toMatch(/EMFILE|Error:/);
    for (const socket of silent) socket.destroy();
    const db = new Database(join(tmp.dir, "silent.db"), { readonly: true });
    expect(db.prepare("SELECT count(*) AS n FROM events").get()).toEqual({ n: 20 });
    db.close();
  }, 90_000);
});
