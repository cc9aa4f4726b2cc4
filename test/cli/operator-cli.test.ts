import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli-capture.ts";
import { processingInbox } from "../helpers/processing.ts";
import { secrets } from "../helpers/signers.ts";
import { storeFactories } from "../helpers/stores.ts";
import { tempDir } from "../helpers/temp.ts";

// What the dashboard shows, from the command line: the overview figures, dedup-key search,
// rejected requests and the runbook list, each a read-only operation with text and --json,
// against a real store that an inbox filled.

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const runbooks = {
  "std:invoice.paid": {
    owner: "billing",
    safeToReprocess: true,
    notes: "re-sends the receipt email",
    link: "https://runbooks.example.com/invoice-paid",
  },
  "std:*": { owner: "platform" },
};

describe.each(storeFactories())("operator CLI on $name", (factory) => {
  /** Two events (one received twice) and one forged request, then a config naming the store. */
  async function filled() {
    const store = await factory.open();
    cleanups.push(() => store.cleanup());
    const env = processingInbox({ store: store.url, handlers: { "std:*": async () => undefined } });
    cleanups.push(env.cleanup);
    const first = await env.post("msg_paid_1", { type: "invoice.paid" });
    await env.post("msg_paid_1", { type: "invoice.paid" });
    const second = await env.post("msg_other_2", { type: "other" });
    expect(await env.postForged("msg_forged", { type: "invoice.paid" })).toBe(401);
    const tmp = tempDir();
    cleanups.push(() => tmp.cleanup());
    const config = join(tmp.dir, "hookinbox.config.json");
    writeFileSync(
      config,
      JSON.stringify({
        sources: { std: { provider: "standard-webhooks", secrets: [secrets.standard] } },
        runbooks,
      }),
    );
    const cli = (...args: string[]) =>
      runCli([...args, "--config", config], { DATABASE_URL: store.url });
    return { cli, first: first.eventId, second: second.eventId };
  }

  it("prints the overview figures, as text and as the operation's JSON", async () => {
    const { cli } = await filled();
    const json = await cli("overview", "--minutes", "15", "--json");
    expect(json.code).toBe(0);
    const overview = JSON.parse(json.stdout);
    expect(overview.minutes).toBe(15);
    expect(overview.totals).toEqual({
      received: 3,
      duplicates: 1,
      rejected: 1,
      duplicateRate: 1 / 3,
    });
    expect(overview.sources).toEqual([{ source: "std", received: 3, duplicates: 1, rejected: 1 }]);
    expect(overview.rejectedByReason).toHaveLength(1);
    expect(overview.targets).toMatchObject([
      { source: "std", target: "std:*", pending: 2, dead: 0 },
    ]);
    const text = await cli("overview");
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("received 3, duplicates 1 (33.3%), rejected 1");
    expect(text.stdout).toMatch(/^std\s+std:\*\s+2\s+0\s+0\s+0\s+0\s+\d+s$/m);
    const refused = await cli("overview", "--minutes", "2");
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--minutes must be an integer from 5 to 1440");
  });

  it("finds events by dedup key or id, and exits 1 when none matches", async () => {
    const { cli, first, second } = await filled();
    expect(await cli("events", "search", "msg_paid_1", "--json")).toEqual({
      code: 0,
      stdout: `${JSON.stringify({ eventIds: [first] })}\n`,
      stderr: "",
    });
    expect(await cli("events", "search", second)).toEqual({
      code: 0,
      stdout: `${second}\n`,
      stderr: "",
    });
    expect(await cli("events", "search", "msg_paid_1", "--source", "elsewhere")).toEqual({
      code: 1,
      stdout: "no event has that id or dedup key\n",
      stderr: "",
    });
  });

  it("lists rejected requests with their status and code, never a header value", async () => {
    const { cli } = await filled();
    const json = await cli("receipts", "list", "--rejected", "--json");
    expect(json.code).toBe(0);
    const page = JSON.parse(json.stdout);
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({ source: "std", eventId: null, status: 401 });
    expect(page.items[0].code).toMatch(/^HOOKINBOX_/);
    const accepted = JSON.parse((await cli("receipts", "list", "--accepted", "--json")).stdout);
    expect(accepted.items.map((r: { duplicate: boolean }) => r.duplicate).sort()).toEqual([
      false,
      false,
      true,
    ]);
    const text = await cli("receipts", "list", "--rejected");
    expect(text.code).toBe(0);
    expect(text.stdout.split("\n")[0]).toMatch(/^ID\s+SOURCE\s+RECEIVED\s+OUTCOME/);
    expect(text.stdout).toContain(`rejected 401 ${page.items[0].code}`);
    expect(text.stdout).not.toContain("v1,");
    const both = await cli("receipts", "list", "--rejected", "--accepted");
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("--rejected and --accepted exclude each other");
  });

  it("lists the configured runbooks in configured order", async () => {
    const { cli } = await filled();
    const json = await cli("runbooks", "list", "--json");
    expect(JSON.parse(json.stdout)).toEqual({
      items: [
        {
          pattern: "std:invoice.paid",
          owner: "billing",
          safeToReprocess: true,
          notes: "re-sends the receipt email",
          link: "https://runbooks.example.com/invoice-paid",
        },
        { pattern: "std:*", owner: "platform", safeToReprocess: null, notes: null, link: null },
      ],
    });
    const text = (await cli("runbooks", "list")).stdout.split("\n");
    expect(text[0]).toMatch(/^PATTERN\s+OWNER\s+SAFE TO REPROCESS\s+NOTES\s+LINK$/);
    expect(text[1]).toMatch(
      /^std:invoice\.paid\s+billing\s+yes\s+re-sends the receipt email\s+https:/,
    );
    expect(text[2]).toMatch(/^std:\*\s+platform\s+not said\s+-\s+-$/);
  });
});

describe("operator CLI help", () => {
  it("answers --help for each new command", async () => {
    for (const [args, option] of [
      [["overview"], "--minutes"],
      [["events", "search"], "--source"],
      [["receipts", "list"], "--rejected"],
      [["runbooks", "list"], "--json"],
    ] as const) {
      const help = await runCli([...args, "--help"]);
      expect({ args, code: help.code }).toEqual({ args, code: 0 });
      expect(help.stdout).toContain(option);
    }
  });
});
