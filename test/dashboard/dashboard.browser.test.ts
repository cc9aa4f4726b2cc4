import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import { launchChromium } from "../helpers/chromium.ts";
import { until } from "../helpers/processing.ts";
import { type Receiver, startReceiver } from "../helpers/receiver.ts";
import { secrets, standardRequest } from "../helpers/signers.ts";
import { repoRoot, tempDir } from "../helpers/temp.ts";

// The dashboard end to end in headless Chromium (Debian's, driven by playwright-core) against a
// real gateway over loopback on SQLite: sign in, an event sent three times shows three receipts,
// a replay shows its new attempt flagged, a dead letter shows its runbook and is retried (the
// runbook says "not safe", so bulk retry asks for the override), the overview shows the exact
// totals and charts (rejections by reason, sampled gauges per target), the rejected request
// is listed. Screenshots go to test-results/screenshots/.

const token = "dashboard-browser-test-token-0123456789";
const shots = join(repoRoot, "test-results", "screenshots");
let gateway: Gateway;
let browser: Browser;
let page: Page;
let tmp: ReturnType<typeof tempDir>;
let handled = 0;
let billing: Receiver;

beforeAll(async () => {
  const chromiumError = inject("chromiumError");
  if (chromiumError) throw new Error(chromiumError);
  mkdirSync(shots, { recursive: true });
  tmp = tempDir();
  billing = await startReceiver();
  gateway = await startGateway(
    {
      store: `sqlite:${join(tmp.dir, "dashboard.db")}`,
      sources: { std: { provider: "standard-webhooks", secrets: [secrets.standard] } },
      admin: { token },
      handlers: {
        "std:order.paid": async () => {
          handled++;
        },
        "std:card.charge": async () => {
          throw new Error("card processor unreachable (ECONNREFUSED)");
        },
      },
      // Invoices go to a destination through a transform (the event page previews it).
      destinations: {
        billing: {
          url: billing.url,
          secret: "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD",
          allowPrivateNetworks: true,
          transform: (event: { json: unknown }) => {
            const invoice = event.json as { n: number; drop?: boolean };
            return invoice.drop ? null : { body: { billed: invoice.n } };
          },
        },
      },
      routes: [{ from: "std", types: ["invoice.*"], to: "billing" }],
      retry: { maxAttempts: 1, schedule: ["1s"], jitter: "none" },
      worker: { pollInterval: "50ms" },
      runbooks: {
        "std:card.charge": {
          owner: "payments-oncall",
          safeToReprocess: false,
          notes: "Check the processor's dashboard before charging again.",
          link: "https://runbooks.example/card-charge",
        },
      },
    },
    { host: "127.0.0.1", port: 0, env: {}, metricsPort: null },
  );
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
});

afterAll(async () => {
  await browser?.close();
  await gateway?.close();
  await billing?.close();
  tmp?.cleanup();
});

async function send(id: string, payload: Record<string, unknown>, forge = false) {
  const signed = standardRequest(id, JSON.stringify(payload));
  const headers = forge
    ? { ...signed.headers, "webhook-signature": `v1,${Buffer.alloc(32).toString("base64")}` }
    : signed.headers;
  return fetch(`${gateway.url}/webhooks/std`, { method: "POST", headers, body: signed.body });
}

const text = (testId: string) => page.getByTestId(testId).first().textContent();
const shot = (name: string) =>
  page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });

describe("dashboard in Chromium", () => {
  it("signs in, shows receipts, replays, retries a dead letter with its runbook, and counts exactly", async () => {
    // Sign in: the token goes in the form's body, never the URL.
    await page.goto(gateway.url);
    await page.getByLabel("Admin token").fill(token);
    await shot("01-sign-in");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByTestId("total-received").waitFor();
    expect(page.url()).not.toContain(token);
    const cookies = await page.context().cookies();
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite])).toEqual([
      ["hookinbox_session", true, "Strict"],
    ]);

    // Traffic: one event three times (signed), one that dies, one forged request.
    for (let i = 0; i < 3; i++)
      expect((await send("msg_three", { type: "order.paid", n: 1 })).status).toBe(200);
    expect((await send("msg_dead", { type: "card.charge", amount: 4200 })).status).toBe(200);
    expect((await send("msg_forged", { type: "order.paid" }, true)).status).toBe(401);
    await until(
      async () => {
        const dead = await gateway.inbox.store.listDeliveries({ status: "dead" });
        return dead.items.length === 1 && handled === 1;
      },
      15_000,
      "one dead letter and one handled event",
    );

    // Overview: exact totals in the DOM (polled; reload for an immediate read).
    await page.reload();
    await until(async () => (await text("total-received")) === "4", 10_000, "overview totals");
    expect(await text("total-received")).toBe("4");
    expect(await text("total-duplicates")).toBe("2");
    expect(await text("duplicate-rate")).toBe("50.0%");
    expect(await text("total-rejected")).toBe("1");
    expect(await text("total-dead")).toBe("1");
    expect(await page.locator("[data-testid=reasons-table] td code").allInnerTexts()).toEqual([
      "HOOKINBOX_SIGNATURE_MISMATCH",
    ]);
    expect(await page.locator("[data-testid=sources-table] tbody tr td").allInnerTexts()).toEqual([
      "std",
      "4",
      "2",
      "1",
    ]);
    // The sampled charts draw from their second sample (one says "Not enough samples yet"),
    // which arrives with the next poll (live, without a reload); then seven uPlot charts drew
    // their canvases.
    const points = () => page.getByTestId("chart-dead").getAttribute("data-points");
    await until(async () => Number(await points()) >= 2, 15_000, "a second sample");
    await page.locator("[data-testid=chart-dead] canvas").waitFor();
    expect(await page.locator(".chart canvas").count()).toBe(7);
    // Rejected by reason: one line per reason, named in the legend (uPlot's first is the time).
    const legend = (chart: string) =>
      page.locator(`[data-testid=${chart}] .u-legend .u-series .u-label`).allInnerTexts();
    expect((await legend("chart-rejected-by-reason")).slice(1)).toEqual([
      "HOOKINBOX_SIGNATURE_MISMATCH",
    ]);
    // Sampled gauges: one line per target, captioned as samples since the page opened.
    expect((await legend("chart-dead")).slice(1)).toEqual(["std → std:card.charge"]);
    expect((await legend("chart-failing")).slice(1)).toEqual(["std → std:card.charge"]);
    expect((await legend("chart-oldest-age")).slice(1)).toEqual(["oldest age (s)"]);
    for (const chart of ["chart-oldest-age", "chart-failing", "chart-dead"])
      expect(await page.locator(`[data-testid=${chart}] .caption`).textContent()).toContain(
        "since this page opened",
      );
    await shot("02-overview");

    // Events: search by the provider's event id (the dedup key) opens the event.
    await page.getByRole("link", { name: "Events" }).click();
    await page.locator("[data-testid=events-table] tbody tr[data-event-id]").first().waitFor();
    expect(await page.locator("[data-testid=events-table] tbody tr[data-event-id]").count()).toBe(
      2,
    );
    await shot("03-events");
    // Filters live in the URL: by status, by type, and a time range that ends before anything.
    const rows = page.locator("[data-testid=events-table] tbody tr[data-event-id]");
    await page.goto(`${gateway.url}/#/events?status=dead`);
    await until(async () => (await rows.count()) === 1, 10_000, "the dead-status filter");
    expect(
      await page.locator("[data-testid=events-table] tbody tr td:nth-child(3)").allInnerTexts(),
    ).toEqual(["card.charge"]);
    await page.goto(`${gateway.url}/#/events?type=order.paid`);
    await until(
      async () =>
        (
          await page.locator("[data-testid=events-table] tbody tr td:nth-child(3)").allInnerTexts()
        ).join() === "order.paid",
      10_000,
      "the type filter",
    );
    await page.goto(`${gateway.url}/#/events?to=2001-01-01T00:00:00`);
    await page.getByText("No events").waitFor();
    await page.goto(`${gateway.url}/#/events`);
    await page.getByPlaceholder("Event id or provider event id / dedup key").fill("msg_three");
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByTestId("receipt-summary").waitFor();
    expect(await text("receipt-summary")).toMatch(
      /^Received 3 times: \d\d:\d\d:\d\d, \d\d:\d\d:\d\d, \d\d:\d\d:\d\d$/,
    );
    expect(await page.getByTestId("receipt").count()).toBe(3);
    expect(await page.locator("[data-testid=receipt] .badge.dup").count()).toBe(2);
    expect(await page.locator("[data-testid=receipt] td:nth-child(4)").allInnerTexts()).toEqual([
      "127.0.0.1",
      "127.0.0.1",
      "127.0.0.1",
    ]);
    expect(await page.locator("[data-testid=receipt] td:nth-child(5)").allInnerTexts()).toEqual([
      "secret #1",
      "secret #1",
      "secret #1",
    ]);
    expect(await text("dedup-key")).toBe("msg_three");
    expect(await text("body")).toBe(JSON.stringify({ type: "order.paid", n: 1 }, null, 2));

    // Replay, confirmed: a second delivery, flagged as a replay, whose attempt succeeds.
    await page.getByTestId("replay").click();
    await page.getByTestId("confirm-replay").click();
    await page.getByTestId("replay-message").waitFor();
    expect(await text("replay-message")).toBe("Replayed: 1 new delivery.");
    await until(() => handled === 2, 10_000, "the replay to run");
    await page.reload();
    await page.getByTestId("replay-flag").waitFor();
    expect(await page.getByTestId("delivery").count()).toBe(2);
    const replayed = page.locator("[data-testid=delivery][data-replay=true]");
    expect(await replayed.count()).toBe(1);
    expect(await replayed.locator("[data-testid=attempt] .outcome").allInnerTexts()).toEqual([
      "success",
    ]);
    await shot("04-event-detail-replayed");

    // Dead letters: the runbook beside it; bulk retry asks for the override (not safe).
    await page.getByRole("link", { name: "Dead letters & stuck" }).click();
    await page.getByTestId("dead-row").first().waitFor();
    expect(await page.getByTestId("dead-row").count()).toBe(1);
    // One page holds them all: no "load more".
    expect(await page.getByTestId("dead-more").count()).toBe(0);
    const runbook = await page
      .locator("[data-testid=dead-row] [data-testid=runbook]")
      .textContent();
    expect(runbook).toContain("payments-oncall");
    expect(runbook).toContain("NOT safe to reprocess");
    expect(await page.locator("[data-testid=dead-row] td.error").textContent()).toBe(
      "Error: card processor unreachable (ECONNREFUSED)",
    );
    await shot("05-dead-letters");
    await page.locator("[data-testid=dead-row] input[type=checkbox]").check();
    await page.getByTestId("bulk-retry").click();
    // A dry run first: the count per target, and the runbook's "not safe" (so: override).
    await page.getByTestId("bulk-plan").waitFor();
    expect(await text("bulk-plan")).toBe(
      "This will retry 1 event (1 delivery: std:card.charge 1).",
    );
    expect(await text("bulk-unsafe")).toBe(
      "A runbook says not safe to reprocess: std:card.charge.",
    );
    await page.getByTestId("override-retry").waitFor();
    await shot("06-unsafe-override");
    await page.getByTestId("override-retry").click();
    await page.getByTestId("dead-message").waitFor();
    expect(await text("dead-message")).toBe("Retried 1 of 1.");
    // The handler still throws: the delivery dies again, now after its second attempt.
    await until(
      async () => {
        const dead = await gateway.inbox.store.listDeliveries({ status: "dead" });
        return dead.items.length === 1 && dead.items[0]!.attempts === 2;
      },
      15_000,
      "the retried delivery to die again",
    );

    // Rejected requests: the forged one, with its reason and header names (never values).
    await page.getByRole("link", { name: "Rejected" }).click();
    await page.getByTestId("rejected-row").first().waitFor();
    expect(await page.getByTestId("rejected-row").count()).toBe(1);
    const cells = await page.locator("[data-testid=rejected-row] td").allInnerTexts();
    expect(cells.slice(1, 5)).toEqual(["std", "HOOKINBOX_SIGNATURE_MISMATCH", "401", "127.0.0.1"]);
    expect(cells[6]).toContain("webhook-signature");
    await shot("07-rejected");

    // 100 more dead letters: a page of 100, then "load more" for the 101st.
    for (let i = 0; i < 100; i++)
      expect((await send(`msg_dead_${i}`, { type: "card.charge", amount: i })).status).toBe(200);
    await until(
      async () =>
        (await gateway.inbox.store.listDeliveries({ status: "dead", limit: 500 })).items.length ===
        101,
      30_000,
      "101 dead letters",
    );
    await page.getByRole("link", { name: "Dead letters & stuck" }).click();
    await page.getByTestId("dead-more").waitFor();
    expect(await page.getByTestId("dead-row").count()).toBe(100);
    await page.getByTestId("dead-more").click();
    await until(async () => (await page.getByTestId("dead-row").count()) === 101, 10_000, "page 2");
    expect(await page.getByTestId("dead-more").count()).toBe(0);
    const ids = await page
      .locator("[data-testid=dead-row]")
      .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-delivery-id")));
    expect(new Set(ids).size).toBe(101);

    // Retry all: the dry run's count before the confirmation; Cancel changes nothing.
    const deadNow = async () =>
      (await gateway.inbox.store.listDeliveries({ status: "dead", limit: 500 })).items
        .map((d) => `${d.id}:${d.attempts}:${d.runAt}`)
        .sort();
    const beforePlan = await deadNow();
    await page.getByTestId("retry-all").click();
    await page.getByTestId("bulk-plan").waitFor();
    expect(await text("bulk-plan")).toBe(
      "This will retry 101 events (101 deliveries: std:card.charge 101).",
    );
    await shot("08-retry-all-plan");
    await page.getByTestId("cancel-bulk").click();
    expect(await page.getByTestId("bulk-plan").count()).toBe(0);
    expect(await deadNow()).toEqual(beforePlan);
    // Confirmed (with the override the runbook asks for): all 101 go back.
    await page.getByTestId("retry-all").click();
    await page.getByTestId("override-retry").click();
    await page.getByTestId("dead-message").waitFor();
    await until(
      async () => (await text("dead-message")) === "Retried 101 dead letters.",
      10_000,
      "the retry of all dead letters",
    );

    // Sign out: the page asks for the token again and the API refuses the old cookie.
    await page.getByTestId("sign-out").click();
    await page.getByLabel("Admin token").waitFor();
    const after = await page.evaluate(async () => (await fetch("api/events")).status);
    expect(after).toBe(401);
  });

  it("the event page previews what each destination would be sent after transforms, and marks a filtered attempt", async () => {
    await page.goto(gateway.url);
    await page.getByLabel("Admin token").fill(token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByTestId("total-received").waitFor();
    const eventOf = async (id: string, payload: Record<string, unknown>) =>
      ((await (await send(id, payload)).json()) as { eventId: string }).eventId;
    const kept = await eventOf("msg_invoice_kept", { type: "invoice.paid", n: 3 });
    const dropped = await eventOf("msg_invoice_dropped", {
      type: "invoice.paid",
      n: 4,
      drop: true,
    });
    await until(
      async () =>
        (await gateway.inbox.store.getEvent(kept))?.status === "done" &&
        (await gateway.inbox.store.getEvent(dropped))?.status === "done",
      15_000,
      "both invoices delivered or filtered",
    );
    expect(billing.requests.map((r) => r.body.toString())).toEqual(['{"billed":3}']);

    await page.goto(`${gateway.url}/#/events/${kept}`);
    await page.getByTestId("transform-preview").waitFor();
    expect(await page.getByTestId("transform-preview").getAttribute("data-outcome")).toBe("send");
    expect(await text("preview-body")).toBe('{"billed":3}');
    await shot("09-transform-preview");
    await page.goto(`${gateway.url}/#/events/${dropped}`);
    await page.locator("[data-testid=transform-preview][data-outcome=filtered]").waitFor();
    await page.getByTestId("filtered").waitFor();
    expect(await text("filtered")).toBe("filtered: nothing sent");
  });
});
