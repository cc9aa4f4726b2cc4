import { createHmac } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Command } from "commander";
import { afterAll, describe, expect, it } from "vitest";
import { commandHost } from "../../src/cli/command-host.ts";
import { cliContext } from "../../src/cli/context.ts";
import { buildProgram } from "../../src/cli/program.ts";
import { createInbox } from "../../src/inbox.ts";
import { runCli } from "../helpers/cli-capture.ts";
import { until } from "../helpers/processing.ts";
import { startReceiver } from "../helpers/receiver.ts";
import { repoRoot, tempDir } from "../helpers/temp.ts";

// Every CLI command that prints stored data, run over data a hostile sender (and a hostile
// destination) chose: terminal escapes, C1 controls, bidi overrides and line breaks that would
// fake output lines. Nothing of it may reach the terminal raw, in text or in --json.

/** Control characters, DEL, C1 (U+009B is CSI), line separators and bidi overrides/isolates. */
const hostile = (tag: string) =>
  `${tag}\u001b[2J\u001b]0;owned\u0007\u0008\u007f\u009b31m\u2028\u202e\u2066\r\nFORGED ${tag}\tx`;
const secret = "hostile-output-secret";
const raw = (cause: string) => new RegExp(cause, "u");
/** Any character that must not reach a terminal raw (`\n` and `\t` are the CLI's own layout). */
const forbidden = raw(
  "[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069]",
);

/** Every leaf command path of the program, from commander's tree (a new command shows up here). */
function leafCommands(): string[] {
  const sink = { write: () => true } as unknown as NodeJS.WritableStream;
  const program = buildProgram(
    commandHost(cliContext({ cwd: process.cwd(), env: {}, stdout: sink, stderr: sink })),
    [],
    "0",
  );
  const walk = (command: Command, path: string[]): string[] =>
    command.commands
      .filter((c) => c.name() !== "help")
      .flatMap((c) =>
        c.commands.length > 0 ? walk(c, [...path, c.name()]) : [[...path, c.name()].join(" ")],
      );
  return walk(program, []);
}

/** Commands that never print stored data (they print what the operator asked for, or counts). */
const printsNoStoredData = new Set([
  "start", // the gateway's banner and logs
  "migrate", // migration counts
  "send", // a receiver's answer, through printable (send-sample.test.ts)
  "probe", // a receiver's answers, through printable (probe-cli.test.ts)
  "retention run", // counts
  "completion", // a shell script built from the command tree
  "work", // a summary of counts on stdout; logs are JSON lines on stderr, as for start
]);

/** Commands that read a running gateway: their hostile-output checks are in their own files. */
const checkedElsewhere = new Set([
  "listen", // test/cli/listen.test.ts: a hostile event type, in text and JSON
]);

const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("CLI output over hostile stored data", () => {
  it("every command that prints stored data escapes control and bidi characters, in text and JSON", async () => {
    const tmp = tempDir();
    cleanups.push(() => tmp.cleanup());
    const app = await startReceiver(() => ({
      status: 500,
      headers: { "content-type": "text/plain" },
      body: hostile("answer"),
    }));
    cleanups.push(() => app.close());
    const store = `sqlite:${join(tmp.dir, "hostile.db")}`;
    const config = {
      store,
      sources: {
        raw: {
          provider: "hmac",
          header: "x-signature",
          secrets: [secret],
          identity: {
            id: "header:x-event-id",
            type: "header:x-event-type",
            orderingKey: "header:x-key",
          },
        },
      },
      destinations: {
        app: {
          url: app.url,
          secret: "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD",
          allowPrivateNetworks: true,
          retry: { maxAttempts: 1 },
        },
      },
      routes: [{ from: "raw", to: "app" }],
      retry: { maxAttempts: 1 },
      runbooks: { "raw:*": { owner: hostile("owner"), notes: hostile("notes") } },
      audit: { enabled: true },
    };
    // A handler that runs an effect keyed by the sender's id and fails quoting it: an effect key
    // and a last error with the sender's bytes in them.
    const configFile = join(tmp.dir, "hookinbox.config.mjs");
    writeFileSync(
      configFile,
      `export default { ...${JSON.stringify(config)}, handlers: { "raw:*": async (event, ctx) => { await ctx.effect("ship " + event.dedupKey, async () => undefined); throw new Error("handler failed on " + event.dedupKey); } } };\n`,
    );
    const loaded = (await import(pathToFileURL(configFile).href)) as { default: unknown };

    // A sender's hostile requests: id, type, ordering key, another header and the body bytes;
    // both reach the destination (a hostile type is percent-encoded in hookinbox-type), whose
    // answer is hostile.
    const inbox = createInbox(loaded.default as never, { env: {} });
    const body = Buffer.from(`{"a":1}\n${hostile("body")}`);
    const post = (headers: Record<string, string>) =>
      inbox.handle({
        method: "POST",
        url: "/webhooks/raw",
        headers: {
          "content-type": "application/json",
          "x-signature": createHmac("sha256", secret).update(body).digest("hex"),
          ...headers,
        },
        body: new Uint8Array(body),
      });
    const answer = await post({
      "x-event-id": hostile("id"),
      "x-event-type": hostile("type"),
      "x-key": hostile("key"),
      "x-note": hostile("header"),
    });
    expect(answer.status).toBe(200);
    const eventId = (JSON.parse(answer.body) as { eventId: string }).eventId;
    const reached = await post({ "x-event-id": hostile("id2"), "x-event-type": "plain.type" });
    expect(reached.status).toBe(200);
    // A forged one too (a rejected receipt), with a hostile id.
    const forged = await post({ "x-signature": "00", "x-event-id": hostile("forged") });
    expect(forged.status).toBe(401);
    const worker = inbox.startWorker();
    const deadOnes = await until(async () => {
      const page = await inbox.store.listDeliveries({ status: "dead" });
      return page.items.length === 4 ? page.items : null;
    });
    await worker.stop(1000);
    await inbox.close();
    expect(
      deadOnes.filter((d) => d.target === "app").map((d) => d.lastError?.slice(0, 25)),
    ).toEqual(expect.arrayContaining(["HOOKINBOX_FORWARD_STATUS:"]));
    const dead = deadOnes.find((d) => d.lastError?.includes("handler failed on id2\u001b"));
    if (!dead)
      throw new Error(
        `no dead delivery kept the answer: ${JSON.stringify(deadOnes.map((d) => d.lastError))}`,
      );

    const cli = (args: string[]) => runCli([...args, "--config", configFile], {});
    // The dead-letter queue shows the handler's error, escaped (before the runs below retry it).
    expect((await cli(["dlq", "list"])).stdout).toContain("Error: handler failed on id2\\x1b[2J");
    // What each command runs with; every leaf command is here or in printsNoStoredData.
    const runs: Record<string, string[][]> = {
      overview: [["overview"]],
      "events list": [["events", "list"]],
      "events search": [["events", "search", hostile("id")]],
      "events show": [["events", "show", eventId]],
      "receipts list": [
        ["receipts", "list"],
        ["receipts", "list", "--rejected"],
      ],
      replay: [["replay", eventId]],
      "dlq list": [["dlq", "list"]],
      "dlq retry": [["dlq", "retry", dead.id]],
      retry: [["retry", dead.id]],
      "destinations list": [["destinations", "list"]],
      "destinations pause": [["destinations", "pause", "app", "--reason", hostile("reason")]],
      "destinations deliveries": [["destinations", "deliveries", "app"]],
      "destinations resume": [["destinations", "resume", "app"]],
      "destinations enable": [["destinations", "enable", "app"]],
      stuck: [["stuck", "--older-than", "0s"]],
      "effects list": [["effects", "list"]],
      "effects resolve": [["effects", "resolve", "eff_none", "--done"]],
      "audit head": [["audit", "head"]],
      "audit prove": [["audit", "prove", eventId]],
      "audit consistency": [["audit", "consistency", "--from", "1", "--to", "1"]],
      "audit verify": [["audit", "verify"]],
      "runbooks list": [["runbooks", "list"]],
      "transform test": [["transform", "test", eventId, "--target", "app"]],
    };
    expect(
      leafCommands().filter(
        (path) => !(path in runs) && !printsNoStoredData.has(path) && !checkedElsewhere.has(path),
      ),
    ).toEqual([]);

    const jsonOptions = new Set(["overview", "events", "receipts", "replay", "dlq", "retry"]);
    let runsDone = 0;
    for (const [path, argLists] of Object.entries(runs)) {
      for (const args of argLists) {
        const variants = jsonOptions.has(args[0] ?? "") || args[0] === "destinations" ? 2 : 1;
        for (let v = 0; v < variants; v++) {
          const given = v === 0 ? args : [...args, "--json"];
          const out = await cli(given);
          runsDone++;
          const text = out.stdout + out.stderr;
          expect({ path, given, raw: forbidden.exec(text)?.[0] ?? null }).toEqual({
            path,
            given,
            raw: null,
          });
          // No data line break starts a line of its own ("FORGED …" would fake output).
          expect({ given, forged: /^FORGED/m.test(text) }).toEqual({ given, forged: false });
          if (v === 1 && out.code === 0) expect(() => JSON.parse(out.stdout)).not.toThrow();
        }
      }
    }
    expect(runsDone).toBeGreaterThan(30);

    // The hostile fields do show, escaped, where a person reads them.
    const shown = (await cli(["events", "show", eventId])).stdout;
    expect(shown).toContain("type:         type\\x1b[2J\\x1b]0;owned\\x07");
    expect(shown).toContain("\\u202e\\u2066\\x0d\\x0aFORGED type\\x09x");
    expect(shown).toContain("  x-note: header\\x1b[2J");
    expect(shown).toContain(`{"a":1}\\x0abody\\x1b[2J`);
    const failed = (await cli(["events", "show", dead.eventId])).stdout;
    expect(failed).toMatch(/last error: Error: handler failed on id2\\x1b\[2J/);
  });
});

describe("CLI output paths", () => {
  it("only main.ts reaches process.stdout/stderr; commands write through TerminalOutput", () => {
    const dir = join(repoRoot, "src/cli");
    const direct = readdirSync(dir)
      .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && f !== "main.ts")
      .filter((f) =>
        /process\.(stdout|stderr)\.write|console\.(log|error|warn|info)/.test(
          readFileSync(join(dir, f), "utf8").replace(/^\s*\*.*$/gm, ""),
        ),
      );
    expect(direct).toEqual([]);
  });
});
