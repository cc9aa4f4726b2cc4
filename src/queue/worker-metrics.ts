/** How a delivery attempt ended, as the worker counts it. */
export type DeliveryOutcomeLabel =
  | "done"
  | "stale"
  | "retry"
  | "dead"
  | "lease-lost"
  | "abandoned"
  | "crashed";

/**
 * What the worker reports. Declared here, beside what records it; the admin side
 * (admin/metrics.ts) implements it with Prometheus counters.
 */
export interface WorkerMetrics {
  attemptStarted(target: string): void;
  attemptEnded(target: string, outcome: DeliveryOutcomeLabel, seconds: number): void;
  leasesRescued(count: number): void;
  effectHeld(target: string): void;
  storeError(operation: string): void;
}
