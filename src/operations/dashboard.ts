import { z } from "zod";
import { defineOperation, type OperationContext } from "./operation.ts";

const minutesMessage = "must be an integer from 5 to 1440";

/**
 * `GET /api/dashboard/overview` query: the window, in minutes (5 to 1440, default 60).
 *
 * @example
 * ```ts
 * overviewQuery.parse({ minutes: "30" }); // { minutes: 30 }
 * ```
 */
export const overviewQuery = z
  .object({
    minutes: z.coerce
      .number({ error: minutesMessage })
      .int(minutesMessage)
      .min(5, minutesMessage)
      .max(1440, minutesMessage)
      .default(60),
  })
  .strict();

/**
 * `GET /api/dashboard/search` query: an event id, or a dedup key (the provider's event id),
 * optionally in one source.
 *
 * @example
 * ```ts
 * searchQuery.parse({ q: "evt_1234", source: "stripe" });
 * ```
 */
export const searchQuery = z
  .object({
    q: z
      .string({ error: "must be an event id or a dedup key" })
      .min(1, "must be an event id or a dedup key")
      .max(1024, "must be at most 1024 characters"),
    source: z.string().min(1, "must not be empty").optional(),
  })
  .strict();

/** Per-minute totals and per-source figures of the overview. */
export interface Overview {
  readonly now: string;
  readonly minutes: number;
  /** Minute starts (ms), oldest first, and the counts of each minute. */
  readonly series: {
    readonly minute: number[];
    readonly received: number[];
    readonly duplicates: number[];
    readonly rejected: number[];
    /** The rejected counts of each minute, one list per reason (code), largest total first. */
    readonly rejectedByReason: Array<{ code: string; counts: number[] }>;
  };
  readonly totals: {
    received: number;
    duplicates: number;
    rejected: number;
    duplicateRate: number;
  };
  readonly sources: Array<{
    source: string;
    received: number;
    duplicates: number;
    rejected: number;
  }>;
  readonly rejectedByReason: Array<{ code: string; count: number }>;
  readonly targets: Array<{
    source: string;
    target: string;
    pending: number;
    blocked: number;
    running: number;
    failing: number;
    dead: number;
    oldestAgeSeconds: number;
  }>;
  readonly oldestUnprocessedAgeSeconds: number;
  readonly heldEffects: number;
}

const minuteMs = 60_000;

/**
 * The overview of the last `minutes`: receipts per minute (received = new + duplicate, and
 * rejected, also per code), the duplicate discard rate, rejections by code, and per source and target the
 * unfinished, failing and dead deliveries with the oldest unprocessed one's age.
 *
 * @example
 * ```ts
 * const overview = await buildOverview(inbox, 60);
 * overview.totals.received; // 12
 * ```
 */
export async function buildOverview(
  inbox: Pick<OperationContext, "store" | "now">,
  minutes: number,
): Promise<Overview> {
  const now = inbox.now();
  const first = Math.floor(now / minuteMs) * minuteMs - (minutes - 1) * minuteMs;
  const [rows, gauges, failing] = await Promise.all([
    inbox.store.receiptSeries(first),
    inbox.store.queueGauges(),
    inbox.store.failingDeliveries(),
  ]);
  const series = {
    minute: Array.from({ length: minutes }, (_, i) => first + i * minuteMs),
    received: new Array<number>(minutes).fill(0),
    duplicates: new Array<number>(minutes).fill(0),
    rejected: new Array<number>(minutes).fill(0),
  };
  const sources = new Map<
    string,
    { source: string; received: number; duplicates: number; rejected: number }
  >();
  const reasons = new Map<string, number>();
  const reasonSeries = new Map<string, number[]>();
  for (const row of rows) {
    const i = Math.floor((Number(row.minute) - first) / minuteMs);
    if (i < 0 || i >= minutes) continue;
    const count = Number(row.count);
    let perSource = sources.get(row.source);
    if (!perSource) {
      perSource = { source: row.source, received: 0, duplicates: 0, rejected: 0 };
      sources.set(row.source, perSource);
    }
    if (row.kind === "rejected") {
      series.rejected[i]! += count;
      perSource.rejected += count;
      const code = row.code ?? "unknown";
      reasons.set(code, (reasons.get(code) ?? 0) + count);
      let counts = reasonSeries.get(code);
      if (!counts) {
        counts = new Array<number>(minutes).fill(0);
        reasonSeries.set(code, counts);
      }
      counts[i]! += count;
      continue;
    }
    series.received[i]! += count;
    perSource.received += count;
    if (row.kind === "duplicate") {
      series.duplicates[i]! += count;
      perSource.duplicates += count;
    }
  }
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  const received = sum(series.received);
  const duplicates = sum(series.duplicates);
  const targets = new Map<string, Overview["targets"][number]>();
  const targetOf = (source: string, target: string) => {
    const key = `${source}\0${target}`;
    let entry = targets.get(key);
    if (!entry) {
      entry = {
        source,
        target,
        pending: 0,
        blocked: 0,
        running: 0,
        failing: 0,
        dead: 0,
        oldestAgeSeconds: 0,
      };
      targets.set(key, entry);
    }
    return entry;
  };
  let oldest = 0;
  for (const row of gauges.deliveries) {
    const entry = targetOf(row.source, row.target);
    entry[row.status] += Number(row.count);
    if (row.status !== "dead") {
      const age = Math.max(0, (now - Number(row.oldestCreatedAt)) / 1000);
      entry.oldestAgeSeconds = Math.max(entry.oldestAgeSeconds, age);
      oldest = Math.max(oldest, age);
    }
  }
  for (const row of failing) targetOf(row.source, row.target).failing += Number(row.count);
  const rejectedByReason = [...reasons]
    .map(([code, count]) => ({ code, count }))
    .sort((a, b) => b.count - a.count || a.code.localeCompare(b.code));
  return {
    now: new Date(now).toISOString(),
    minutes,
    series: {
      ...series,
      rejectedByReason: rejectedByReason.map(({ code }) => ({
        code,
        counts: reasonSeries.get(code)!,
      })),
    },
    totals: {
      received,
      duplicates,
      rejected: sum(series.rejected),
      duplicateRate: received === 0 ? 0 : duplicates / received,
    },
    sources: [...sources.values()].sort((a, b) => a.source.localeCompare(b.source)),
    rejectedByReason,
    targets: [...targets.values()].sort(
      (a, b) => a.source.localeCompare(b.source) || a.target.localeCompare(b.target),
    ),
    oldestUnprocessedAgeSeconds: oldest,
    heldEffects: gauges.heldEffects.reduce((n, row) => n + Number(row.count), 0),
  };
}

/**
 * The dashboard's figures: receipts per minute, duplicate rate, rejections by code, and per
 * source and target the unfinished, failing and dead deliveries.
 *
 * @example
 * ```ts
 * const overview = await dashboardOverview.run(inbox.operations, { minutes: 60 });
 * ```
 */
export const dashboardOverview = defineOperation({
  name: "dashboard.overview",
  summary: "the overview of the last minutes: receipts per minute, duplicates, rejections, queues",
  readOnly: true,
  input: overviewQuery,
  run: (ctx, { minutes }) => buildOverview(ctx, minutes),
});

/**
 * Finds events by id or by dedup key (the provider's event id), optionally in one source.
 *
 * @example
 * ```ts
 * const { eventIds } = await dashboardSearch.run(inbox.operations, { q: "evt_1234" });
 * ```
 */
export const dashboardSearch = defineOperation({
  name: "dashboard.search",
  summary: "find events by id or dedup key",
  readOnly: true,
  input: searchQuery,
  run: async (ctx, { q, source }) => {
    const sources = source ? [source] : [...(ctx.sources ?? [])];
    const byKey = await ctx.store.eventIdsByDedupKey(sources, q);
    const byId = q.startsWith("evt_") && (await ctx.store.getEvent(q)) ? [q] : [];
    return { eventIds: [...new Set([...byId, ...byKey])] };
  },
});
