import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import { runCli } from "../helpers/cli-capture.ts";
import { secrets } from "../helpers/signers.ts";
import { tempDir } from "../helpers/temp.ts";

// `hookinbox send <source>` (a configured source, signed with its own secret) honours --times,
// --distinct, --parallel and --json against a real gateway over loopback on SQLite, and refuses
// the options only `send <provider> --to URL` can honour, with one HOOKINBOX_USAGE line.

let gateway: Gateway;
let tmp: ReturnType<typeof tempDir>;
let config: string;

beforeAll(async () => {
  tmp = tempDir();
  const sources = { std: { provider: "standard-webhooks", secrets: [secrets.standard] } };
  gateway = await startGateway(
    { store: `sqlite:${join(tmp.dir, "send.db")}`, sources },
    { host: "127.0.0.1", port: 0, env: {}, metricsPort: null },
  );
  config = join(tmp.dir, "hookinbox.config.json");
  writeFileSync(config, JSON.stringify({ sources }));
});

afterAll(async () => {
  await gateway?.close();
  tmp?.cleanup();
});

interface SendJson {
  source: string;
  type: string;
  url: string;
  ok: boolean;
  sends: Array<{
    eventId: string;
    status: number;
    ms: number;
    response: { ok: boolean; eventId: string; duplicate: boolean };
  }>;
}

const send = (...args: string[]) => runCli(["send", "std", "--config", config, ...args]);
const counts = async () => ({
  events: (await gateway.inbox.store.listEvents({ source: "std", limit: 100 })).items.length,
  receipts: (await gateway.inbox.store.listReceipts({ source: "std", limit: 500 })).items.length,
});

describe("hookinbox send <source>", () => {
  it("--times 3 --parallel 3 --json: the same event three times, one stored, two duplicates", async () => {
    const result = await send("--url", gateway.url, "--times", "3", "--parallel", "3", "--json");
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    expect(result.stdout.split("\n")).toHaveLength(2); // one JSON object, then the newline
    const out = JSON.parse(result.stdout) as SendJson;
    expect([out.source, out.type, out.url, out.ok]).toEqual([
      "std",
      "demo.ping",
      `${gateway.url}/webhooks/std`,
      true,
    ]);
    expect(out.sends.map((s) => s.status)).toEqual([200, 200, 200]);
    expect(new Set(out.sends.map((s) => s.eventId)).size).toBe(1);
    expect(out.sends.map((s) => s.response.duplicate).sort()).toEqual([false, true, true]);
    expect(await counts()).toEqual({ events: 1, receipts: 3 });
  });

  it("--times 3 --distinct: three new events; text output, one line per send", async () => {
    const result = await send("--url", gateway.url, "--times", "3", "--distinct");
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    for (const [i, line] of lines.entries())
      expect(line).toMatch(
        new RegExp(`^send ${i + 1}/3  200 \\{"ok":true,"eventId":"evt_\\w+","duplicate":false\\}$`),
      );
    expect(await counts()).toEqual({ events: 4, receipts: 6 });
  });

  it("--parallel 3 has three requests in flight at once", async () => {
    // A receiver that answers nobody until three requests are waiting: sends one at a time
    // would each wait for the --timeout and fail.
    const waiting: Array<() => void> = [];
    let most = 0;
    const receiver: Server = createServer((request, response) => {
      request.resume();
      waiting.push(() => response.end('{"ok":true}'));
      most = Math.max(most, waiting.length);
      if (waiting.length === 3) for (const answer of waiting.splice(0)) answer();
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    const { port } = receiver.address() as { port: number };
    try {
      const result = await send(
        "--url",
        `http://127.0.0.1:${port}`,
        "--times",
        "3",
        "--parallel",
        "3",
        "--timeout",
        "20000",
        "--json",
      );
      expect(result.code).toBe(0);
      expect((JSON.parse(result.stdout) as SendJson).sends.map((s) => s.status)).toEqual([
        200, 200, 200,
      ]);
      expect(most).toBe(3);
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it("refuses, in one line, the options it cannot honour", async () => {
    const cases: Array<[string[], string]> = [
      [["--secret", "s"], "--secret is for `hookinbox send <provider> --to URL`"],
      [["--private-key", "k.pem"], "--private-key is for `hookinbox send <provider> --to URL`"],
      [["--data", "d.json"], "--data is for `hookinbox send <provider> --to URL`"],
      [["--replay-of", "evt_1"], "--replay-of is for `hookinbox send <provider> --to URL`"],
      [["--distinct", "--id", "msg_1"], "--distinct sends a new event id each time"],
      [["--times", "0"], "--times takes an integer from 1 to 100000"],
      [["--parallel", "many"], "--parallel takes an integer from 1 to 1000"],
      [["--nope"], "Unknown option '--nope' (see hookinbox send --help)"],
    ];
    for (const [args, message] of cases) {
      const result = await send("--url", gateway.url, ...args);
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({
        args,
        code: 2,
        stdout: "",
      });
      expect(result.stderr).toMatch(/^hookinbox: HOOKINBOX_USAGE: [^\n]*\n$/);
      expect(result.stderr).toContain(message);
    }
    const toDistinct = await runCli(["send", "stripe", "--to", gateway.url, "--distinct"]);
    expect(toDistinct.code).toBe(2);
    expect(toDistinct.stderr).toMatch(/^hookinbox: HOOKINBOX_USAGE: [^\n]*\n$/);
    expect(toDistinct.stderr).toContain("--distinct is for `hookinbox send <source>`");
    // Nothing was sent by a refused command.
    expect(await counts()).toEqual({ events: 4, receipts: 6 });
  });
});
