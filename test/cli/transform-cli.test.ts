import { mkdirSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { toNodeListener } from "../../src/adapters/node.ts";
import { loadConfigFile } from "../../src/config/load.ts";
import { createInbox, type Inbox } from "../../src/inbox.ts";
import { testAdminToken } from "../helpers/admin-token.ts";
import { runCli } from "../helpers/cli-capture.ts";
import { until } from "../helpers/processing.ts";
import { secrets, standardRequest } from "../helpers/signers.ts";
import { storeFactories, type TestStore } from "../helpers/stores.ts";
import { tempDir } from "../helpers/temp.ts";

// A JSON config naming a transform module by path; `hookinbox transform test` printing what a
// destination would be sent (or "filtered") and changing nothing; the admin API's preview (what
// the dashboard's event page shows) over real HTTP; and the config refusals, each one line.

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const destinationSecret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
const billing = `export default (event) =>
  event.json.drop ? null : { body: { billed: event.json.n }, headers: { ...event.headers, "x-billing": "1" } };
`;

/** A folder with transforms/billing.mjs and a JSON config naming it; `more` merges into the destination. */
function configFolder(storeUrl: string, more: Record<string, unknown> = {}) {
  const tmp = tempDir();
  cleanups.push(() => tmp.cleanup());
  mkdirSync(join(tmp.dir, "transforms"));
  writeFileSync(join(tmp.dir, "transforms", "billing.mjs"), billing);
  const path = join(tmp.dir, "hookinbox.config.json");
  writeFileSync(
    path,
    JSON.stringify({
      store: storeUrl,
      admin: { token: testAdminToken },
      sources: { std: { provider: "standard-webhooks", secrets: [secrets.standard] } },
      destinations: {
        app: {
          url: "http://127.0.0.1:9/hooks",
          secret: destinationSecret,
          allowPrivateNetworks: true,
          headers: { "x-api-key": "sekrit-api-key" },
          transform: "./transforms/billing.mjs",
          ...more,
        },
      },
      routes: [{ from: "std", to: "app" }],
    }),
  );
  return { dir: tmp.dir, path };
}

async function post(inbox: Inbox, id: string, payload: Record<string, unknown>): Promise<string> {
  const signed = standardRequest(id, JSON.stringify(payload), new Date());
  const response = await inbox.handle({
    method: "POST",
    url: "/webhooks/std",
    headers: signed.headers,
    body: new TextEncoder().encode(signed.body),
  });
  expect(response.status).toBe(200);
  return (JSON.parse(response.body) as { eventId: string }).eventId;
}

async function rowCounts(store: TestStore): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of ["events", "receipts", "deliveries", "attempts", "destinations"])
    counts[table] = await store.count(`SELECT count(*) AS n FROM ${table}`);
  return counts;
}

/** Runs the worker of an inbox on the config until `eventId` is done; `events show` then prints it. */
async function filterOne(storeUrl: string, path: string, eventId: string) {
  const loaded = await loadConfigFile({ cwd: process.cwd(), path });
  const inbox = createInbox(loaded!.config as never, { env: { DATABASE_URL: storeUrl } });
  const worker = inbox.startWorker();
  await until(async () => (await inbox.store.getEvent(eventId))?.status === "done");
  await worker.stop();
  await inbox.close();
  const shown = await runCli(["events", "show", eventId, "--config", path], {});
  return { attemptsFiltered: shown.stdout };
}

describe.each(storeFactories())("transform test and preview ($name)", (factory) => {
  it("a JSON config's transform module: the preview API and `transform test` show the request or filtered, and change nothing", async () => {
    const store = await factory.open();
    cleanups.push(() => store.cleanup());
    const { path } = configFolder(store.url);
    const loaded = await loadConfigFile({ cwd: process.cwd(), path });
    const inbox = createInbox(loaded!.config as never, { env: {} });
    await inbox.ready();
    const kept = await post(inbox, "msg_kept", { type: "invoice.paid", n: 5 });
    const dropped = await post(inbox, "msg_dropped", { type: "invoice.paid", n: 6, drop: true });

    // The dashboard's event page reads this: over real HTTP, with the admin token.
    const server = http.createServer(toNodeListener(inbox));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const get = async (url: string) => {
      const response = await fetch(`${base}${url}`, {
        headers: { authorization: `Bearer ${testAdminToken}` },
      });
      return { status: response.status, text: await response.text() };
    };
    const page = await get(`/api/events/${kept}/preview`);
    const droppedPage = await get(`/api/events/${dropped}/preview`);
    await new Promise((resolve) => server.close(resolve));
    await inbox.close();
    expect(page.status).toBe(200);
    expect(page.text).not.toContain("sekrit");
    const { previews } = JSON.parse(page.text);
    expect(previews).toHaveLength(1);
    expect(previews[0]).toMatchObject({
      target: "app",
      transforms: ["destinations.app.transform"],
      outcome: "send",
      body: '{"billed":5}',
      bytes: 12,
    });
    expect(previews[0].headers).toMatchObject({
      "x-billing": "1",
      "content-type": "application/json",
      "x-api-key": "(configured)",
      "webhook-id": `${kept}:app`,
      "webhook-signature": "(signed when sent)",
      "hookinbox-event-id": kept,
    });
    expect(JSON.parse(droppedPage.text).previews[0].outcome).toBe("filtered");

    const before = await rowCounts(store);
    const cli = (...args: string[]) => runCli([...args, "--config", path], {});
    const text = await cli("transform", "test", kept, "--target", "app");
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("transforms: destinations.app.transform");
    expect(text.stdout).toContain("x-billing: 1");
    expect(text.stdout).toContain('{"billed":5}');
    expect(text.stdout).not.toContain("sekrit");
    const json = await cli("transform", "test", kept, "--target", "app", "--json");
    expect(JSON.parse(json.stdout).previews[0].body).toBe('{"billed":5}');
    const filtered = await cli("transform", "test", dropped, "--target", "app");
    expect(filtered.code).toBe(0);
    expect(filtered.stdout).toContain("filtered: nothing would be sent");
    const unknown = await cli("transform", "test", kept, "--target", "nope");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^hookinbox: HOOKINBOX_DESTINATION_NOT_FOUND: .*nope/);
    expect(await rowCounts(store)).toEqual(before);
    expect(before.attempts).toBe(0);
    // A filtered attempt, as `events show` prints it.
    const { attemptsFiltered } = await filterOne(store.url, path, dropped);
    expect(attemptsFiltered).toContain("filtered: nothing sent");
  });
});

describe("transform config refusals", () => {
  const cli = (path: string) =>
    runCli(["transform", "test", "evt_x", "--target", "app", "--config", path]);

  it("a module path that is not there, or a module without a default export function, is one line naming the key", async () => {
    const missing = configFolder("sqlite::memory:", { transform: "./transforms/nope.mjs" });
    const result = await cli(missing.path);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^hookinbox: HOOKINBOX_CONFIG_INVALID: Config is invalid: destinations\.app\.transform: module \S+nope\.mjs not found\n$/,
    );
    const noDefault = configFolder("sqlite::memory:", { transform: "./transforms/named.mjs" });
    writeFileSync(
      join(noDefault.dir, "transforms", "named.mjs"),
      "export const shape = () => null;\n",
    );
    const second = await cli(noDefault.path);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(
      /^hookinbox: HOOKINBOX_CONFIG_INVALID: .*destinations\.app\.transform: \S+named\.mjs has no default export function; .*\n$/,
    );
  });

  it("a transform that is not a function, and one on a route to a handler, are refused at boot", () => {
    const base = {
      sources: { std: { provider: "standard-webhooks", secrets: [secrets.standard] } },
      destinations: {
        app: { url: "http://127.0.0.1:9/", secret: destinationSecret, transform: 42 },
      },
    } as never;
    expect(() => createInbox(base, { env: {} })).toThrow(
      "destinations.app.transform: expected a function (event) => ({ body, headers }) | null, or a module path",
    );
    const toHandler = {
      sources: { std: { provider: "standard-webhooks", secrets: [secrets.standard] } },
      handlers: { "std:*": () => undefined },
      routes: [{ from: "std", to: "std:*", transform: () => null }],
    } as never;
    expect(() => createInbox(toHandler, { env: {} })).toThrow(
      /routes\[0\]\.transform: "std:\*" is a handler; a transform applies to destinations only/,
    );
  });
});
