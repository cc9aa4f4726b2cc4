import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { IngestMetrics } from "../ingest/ingest-metrics.ts";
import type { WorkerMetrics } from "../queue/worker-metrics.ts";
import type { QueueGauges } from "../store/queue-types.ts";
import type { SqliteStore } from "../store/sqlite/store.ts";
import type { Store } from "../store/types.ts";

/** The metrics of one inbox: a private prom-client registry plus the store's own figures. */
export interface InboxMetrics extends IngestMetrics, WorkerMetrics {
  readonly registry: Registry;
  /** The Prometheus text exposition, with store-derived gauges read now. */
  render(): Promise<{ contentType: string; body: string }>;
}

// Ingest is sub-millisecond to tens of ms (fsync); handlers and forwards run up to minutes.
const ingestBuckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const deliveryBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/**
 * Creates the Prometheus metrics of an inbox. `storeCommits` (SQLite) exposes the store's commit
 * count as `hookinbox_store_commits_total`. Counters and histograms count what this process
 * did since it started (Prometheus' `rate()` and `sum()` handle restarts and several processes);
 * figures that belong to the store — queue depth, the oldest unprocessed delivery's age, dead
 * letters and held effects now — are read from the store at each scrape, so every process reports
 * the same, correct value.
 *
 * @example
 * ```ts
 * const metrics = createInboxMetrics(() => store.queueGauges(), Date.now);
 * metrics.outcome("stripe", "stored", undefined);
 * const { contentType, body } = await metrics.render();
 * ```
 */
export function createInboxMetrics(
  readGauges: () => Promise<QueueGauges>,
  now: () => number,
  storeCommits?: () => number,
): InboxMetrics {
  const registry = new Registry();
  const counter = <L extends string>(name: string, help: string, labelNames: L[]) =>
    new Counter<L>({ name, help, labelNames, registers: [registry] });
  const gauge = <L extends string>(name: string, help: string, labelNames: L[]) =>
    new Gauge<L>({ name, help, labelNames, registers: [registry] });

  const received = counter(
    "hookinbox_webhooks_received_total",
    "Requests to /webhooks/:source, whatever their outcome.",
    ["source"],
  );
  const accepted = counter("hookinbox_events_accepted_total", "New events durably stored.", [
    "source",
  ]);
  const duplicates = counter(
    "hookinbox_duplicates_total",
    "Deliveries of an event already stored (answered 200, recorded as a receipt).",
    ["source"],
  );
  const rejected = counter(
    "hookinbox_rejected_total",
    "Requests refused, by reason (the HOOKINBOX_* code).",
    ["source", "reason"],
  );
  const ingestSeconds = new Histogram<"source">({
    name: "hookinbox_ingest_duration_seconds",
    help: "Time from the request's body to the answer (verify, store, commit).",
    labelNames: ["source"],
    buckets: ingestBuckets,
    registers: [registry],
  });
  const deliveries = counter(
    "hookinbox_deliveries_total",
    "Delivery attempts by outcome: done, stale, retry, dead, lease-lost, crashed.",
    ["target", "outcome"],
  );
  const deliverySeconds = new Histogram<"target">({
    name: "hookinbox_delivery_duration_seconds",
    help: "Handler or forward latency of one attempt, bookkeeping included.",
    labelNames: ["target"],
    buckets: deliveryBuckets,
    registers: [registry],
  });
  if (storeCommits) {
    // Read from the store at each scrape: commits per event is what group commit saves.
    new Counter({
      name: "hookinbox_store_commits_total",
      help: "Write transactions the SQLite store committed since it opened (one fsync each).",
      registers: [registry],
      collect() {
        this.reset();
        this.inc(storeCommits());
      },
    });
  }
  const attempts = counter("hookinbox_attempts_total", "Delivery attempts started.", ["target"]);
  const deadLetters = counter(
    "hookinbox_dead_letters_total",
    "Deliveries this process dead-lettered.",
    ["target"],
  );
  const rescued = counter(
    "hookinbox_leases_rescued_total",
    "Deliveries whose lease expired (a crashed or stalled worker) put back in the queue.",
    [],
  );
  const effectsHeld = counter(
    "hookinbox_effects_held_total",
    "Effects held for a human because an earlier claim went stale.",
    ["target"],
  );
  const storeErrors = counter(
    "hookinbox_store_errors_total",
    "Store operations that failed (the store was unavailable or refused).",
    ["operation"],
  );
  const depth = gauge(
    "hookinbox_queue_depth",
    "Deliveries not finished now (from the store), by status: pending, blocked, running.",
    ["source", "target", "status"],
  );
  const oldestAge = gauge(
    "hookinbox_oldest_unprocessed_age_seconds",
    "Age of the oldest delivery not finished (from the store); 0 when there is none.",
    ["source", "target"],
  );
  const deadNow = gauge(
    "hookinbox_dead_letters",
    "Dead-lettered deliveries now (from the store).",
    ["source", "target"],
  );
  const heldNow = gauge("hookinbox_effects_held", "Effects held now (from the store).", ["target"]);

  const setGauges = (gauges: QueueGauges, at: number) => {
    for (const metric of [depth, oldestAge, deadNow, heldNow]) metric.reset();
    const oldest = new Map<string, { source: string; target: string; at: number }>();
    for (const row of gauges.deliveries) {
      const labels = { source: row.source, target: row.target };
      if (row.status === "dead") {
        deadNow.set(labels, row.count);
        continue;
      }
      depth.set({ ...labels, status: row.status }, row.count);
      const key = `${row.source}\u0000${row.target}`;
      const seen = oldest.get(key);
      if (!seen || row.oldestCreatedAt < seen.at)
        oldest.set(key, { ...labels, at: row.oldestCreatedAt });
    }
    for (const { source, target, at: created } of oldest.values()) {
      oldestAge.set({ source, target }, Math.max(0, (at - created) / 1000));
    }
    for (const row of gauges.heldEffects) heldNow.set({ target: row.target }, row.count);
  };

  return {
    registry,
    request(source, seconds) {
      received.inc({ source });
      ingestSeconds.observe({ source }, seconds);
    },
    outcome(source, outcome, code) {
      if (outcome === "stored") accepted.inc({ source });
      else if (outcome === "duplicate") duplicates.inc({ source });
      else if (outcome === "rejected" || outcome === "rate-limited")
        rejected.inc({ source, reason: code ?? outcome });
      else if (outcome === "unavailable") storeErrors.inc({ operation: "accept" });
    },
    attemptStarted(target) {
      attempts.inc({ target });
    },
    attemptEnded(target, outcome, seconds) {
      deliveries.inc({ target, outcome });
      deliverySeconds.observe({ target }, seconds);
      if (outcome === "dead") deadLetters.inc({ target });
    },
    leasesRescued(count) {
      rescued.inc(count);
    },
    effectHeld(target) {
      effectsHeld.inc({ target });
    },
    storeError(operation) {
      storeErrors.inc({ operation });
    },
    async render() {
      try {
        setGauges(await readGauges(), now());
      } catch {
        // An unreadable store leaves these absent rather than stale.
        for (const metric of [depth, oldestAge, deadNow, heldNow]) metric.reset();
        storeErrors.inc({ operation: "metrics" });
      }
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}

/**
 * The SQLite store's commit counter (what `hookinbox_store_commits_total` reports), else none.
 *
 * @example
 * ```ts
 * const metrics = createInboxMetrics(() => store.queueGauges(), Date.now, storeCommitsOf(store));
 * ```
 */
export function storeCommitsOf(store: Store): (() => number) | undefined {
  const stats = (store as Partial<SqliteStore>).stats;
  return store.kind === "sqlite" && stats ? () => stats.call(store).commits : undefined;
}
