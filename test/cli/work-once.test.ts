import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createInbox } from "../../src/inbox.ts";
import { hookinboxProcess } from "../helpers/cli-process.ts";
import { secrets, stripeRequest } from "../helpers/signers.ts";
import { tempDir } from "../helpers/temp.ts";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const hookinbox = (args: string[]) => hookinboxProcess(tmp.dir, args);

const store = "sqlite:./hookinbox.db";
const sources = { stripe: { provider: "stripe" as const, secrets: [secrets.stripe] } };

describe("hookinbox work --once", () => {
  it("processes what is due within --max-time, prints the summary as JSON and exits", async () => {
    const handled = join(tmp.dir, "handled.txt");
    writeFileSync(handled, "");
    writeFileSync(
      join(tmp.dir, "hookinbox.config.mjs"),
      `import { appendFileSync } from "node:fs";

export default {
  store: ${JSON.stringify(store)},
  log: { level: "warn" },
  sources: ${JSON.stringify(sources)},
  retry: { schedule: ["1h"], jitter: "none" },
  handlers: {
    "stripe:invoice.paid": async (event) => appendFileSync(${JSON.stringify(handled)}, event.dedupKey + "\\n"),
    "stripe:charge.failed": async () => { throw new Error("the ledger is down"); },
  },
};
`,
    );
    // The same routes as the config's handlers (deliveries are routed when an event is stored).
    const inbox = createInbox(
      {
        store: `sqlite:${join(tmp.dir, "hookinbox.db")}`,
        sources,
        handlers: { "stripe:invoice.paid": () => {}, "stripe:charge.failed": () => {} },
      },
      { env: {} },
    );
    for (const [id, type] of [
      ["evt_w1", "invoice.paid"],
      ["evt_w2", "invoice.paid"],
      ["evt_w3", "invoice.paid"],
      ["evt_w4", "charge.failed"],
    ] as const) {
      const signed = stripeRequest(id, { type, extra: { data: { object: { id: `in_${id}` } } } });
      const response = await inbox.handleWebhook("stripe", {
        method: "POST",
        url: "/webhooks/stripe",
        headers: signed.headers,
        body: new TextEncoder().encode(signed.body),
      });
      expect(response.status).toBe(200);
    }
    await inbox.close();

    const usage = await hookinbox(["work", "--max-time", "10s"]);
    expect([usage.code, usage.stderr]).toEqual([
      2,
      expect.stringContaining(
        "HOOKINBOX_USAGE: Invalid command line: work runs one bounded pass: pass --once",
      ),
    ]);
    expect(readFileSync(handled, "utf8")).toBe("");

    const first = await hookinbox(["work", "--once", "--max-time", "10s", "--grace", "1s"]);
    expect([first.code, JSON.parse(first.stdout)]).toEqual([
      0,
      { done: 3, retried: 1, dead: 0, failed: 0, released: 0, remaining: 0 },
    ]);
    expect(readFileSync(handled, "utf8").split("\n").filter(Boolean).sort()).toEqual([
      "evt_w1",
      "evt_w2",
      "evt_w3",
    ]);
    // The failed one waits an hour for its retry: nothing is due now.
    const second = await hookinbox(["work", "--once"]);
    expect([second.code, JSON.parse(second.stdout)]).toEqual([
      0,
      { done: 0, retried: 0, dead: 0, failed: 0, released: 0, remaining: 0 },
    ]);
  }, 120_000);
});
