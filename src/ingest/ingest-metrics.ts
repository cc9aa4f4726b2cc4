/**
 * What ingest reports per event or rejection (the `outcome` of its log line). Declared here,
 * beside what records it; the admin side (admin/metrics.ts) implements it with Prometheus counters.
 */
export interface IngestMetrics {
  /** One request to `/webhooks/:source` answered, with its latency. */
  request(source: string, seconds: number): void;
  /** `stored`, `duplicate`, `rejected` (with the code), `unavailable`, `rate-limited`… */
  outcome(source: string, outcome: string, code: string | undefined): void;
}
