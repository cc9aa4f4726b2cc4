import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import type { Overview } from "../../src/operations/dashboard.ts";
import { launchChromium } from "../helpers/chromium.ts";
import { until } from "../helpers/processing.ts";
import { secrets } from "../helpers/signers.ts";
import { tempDir } from "../helpers/temp.ts";

// The overview's charts in headless Chromium against a real gateway over loopback: the x axis of
// every chart spans exactly its data's times (the per-minute series, and the samples taken since
// the page opened), its tick labels name times inside that span, and a sampled chart with one
// sample says "Not enough samples yet" instead of drawing. (uPlot widens a one-point time axis by
// 86,400 units: with seconds that read "Jun 2027 … Jun 2029" on a clock at 2026-12.)

const token = "dashboard-charts-test-token-0123456789";
let gateway: Gateway;
let browser: Browser;
let page: Page;
let tmp: ReturnType<typeof tempDir>;
/** Every overview the page fetched, in order. */
const overviews: Overview[] = [];

beforeAll(async () => {
  const chromiumError = inject("chromiumError");
  if (chromiumError) throw new Error(chromiumError);
  tmp = tempDir();
  gateway = await startGateway(
    {
      store: `sqlite:${join(tmp.dir, "charts.db")}`,
      sources: { std: { provider: "standard-webhooks", secrets: [secrets.standard] } },
      admin: { token },
    },
    { host: "127.0.0.1", port: 0, env: {}, metricsPort: null },
  );
  browser = await launchChromium();
  // UTC in the page, so the test can name the label each tick must have.
  page = await browser.newPage({ viewport: { width: 1280, height: 900 }, timezoneId: "UTC" });
  page.on("response", async (response) => {
    if (!response.url().includes("/api/dashboard/overview")) return;
    overviews.push((await response.json()) as Overview);
  });
});

afterAll(async () => {
  await browser?.close();
  await gateway?.close();
  tmp?.cleanup();
});

interface Drawn {
  points: number;
  xMin: number;
  xMax: number;
  ticks: Array<{ at: number; label: string }>;
}

/** What a chart drew: its points, x range (ms) and tick labels, from its section's attributes. */
async function drawn(id: string): Promise<Drawn> {
  return page.getByTestId(id).evaluate((el) => ({
    points: Number(el.getAttribute("data-points")),
    xMin: Number(el.getAttribute("data-x-min")),
    xMax: Number(el.getAttribute("data-x-max")),
    ticks: JSON.parse(el.getAttribute("data-ticks") ?? "[]") as Drawn["ticks"],
  }));
}

/** Asserts a chart's x range is exactly [from, to] and its ticks lie inside, labelled in UTC. */
function expectAxis(chart: Drawn, from: number, to: number, label: (at: Date) => string) {
  expect({ xMin: chart.xMin, xMax: chart.xMax }).toEqual({ xMin: from, xMax: to });
  expect(chart.ticks.length).toBeGreaterThan(0);
  for (const tick of chart.ticks) {
    expect(tick.at).toBeGreaterThanOrEqual(from);
    expect(tick.at).toBeLessThanOrEqual(to);
    expect(tick.label).toBe(label(new Date(tick.at)));
  }
}

const hhmm = (at: Date) => at.toISOString().slice(11, 16);
const hhmmss = (at: Date) => at.toISOString().slice(11, 19);
const sampled = ["chart-oldest-age", "chart-failing", "chart-dead"];

describe("overview charts in Chromium", () => {
  it("span exactly their data's times, and a chart of one sample says so instead of drawing", async () => {
    await page.goto(gateway.url);
    await page.getByLabel("Admin token").fill(token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByTestId("total-received").waitFor();
    await until(() => overviews.length >= 1, 10_000, "the first overview");
    const first = overviews[0]!;

    // One sample: the three sampled charts say so and draw no canvas; the four per-minute
    // charts draw over the 60 minutes of the window.
    for (const id of sampled) {
      expect(await page.getByTestId(id).getAttribute("data-points")).toBe("1");
      expect(await page.getByTestId(`${id}-not-enough`).textContent()).toBe(
        "Not enough samples yet: 1 of the 2 a line needs.",
      );
      expect(await page.locator(`[data-testid=${id}] canvas`).count()).toBe(0);
    }
    expect(await page.locator(".chart canvas").count()).toBe(4);
    const minutes = first.series.minute;
    expect(minutes.length).toBe(60);
    const received = await drawn("chart-received");
    expect(received.points).toBe(60);
    // The window's minutes, not years: 59 minutes from the first minute start to the last.
    expectAxis(received, minutes[0]!, minutes[59]!, hhmm);
    expect(received.xMax - received.xMin).toBe(59 * 60_000);

    // The next poll (every 5 s) adds a second sample: the sampled charts draw from the first
    // sample's time to the second's, labelled to the second.
    await until(
      async () => (await page.getByTestId("chart-dead").getAttribute("data-x-max")) !== null,
      20_000,
      "a second sample drawn",
    );
    for (const id of sampled) {
      const chart = await drawn(id);
      expect(chart.points).toBe(2);
      expect(await page.getByTestId(`${id}-not-enough`).count()).toBe(0);
      const [a, b] = [Date.parse(overviews[0]!.now), Date.parse(overviews[1]!.now)];
      expectAxis(chart, a, b, hhmmss);
    }
    expect(await page.locator(".chart canvas").count()).toBe(7);
  });
});
