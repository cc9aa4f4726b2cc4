// The servers of the ingest half of bench/postgres.ts, each its own process, started with
// bench/ingest/servers.ts's launcher: `hookinbox start` on a PostgreSQL store, and the
// PostgreSQL durable stub.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { STRIPE_SECRET } from "../ingest/requests.ts";
import { launch, repoRoot, type ServerUnderTest } from "../ingest/servers.ts";

/**
 * `hookinbox start --config <json> --port 0` with `store` = a PostgreSQL URL, one `stripe`
 * source and default ("info") logging to /dev/null: the same gateway bench:ingest runs. `extra`
 * adds config keys (bench:forward adds destinations and routes, and passes an SQLite URL too).
 */
export function startHookinboxPostgres(
  dir: string,
  store: string,
  cpuProfile = false,
  extra: Record<string, unknown> = {},
): Promise<ServerUnderTest> {
  const config = join(dir, "hookinbox.config.json");
  writeFileSync(
    config,
    JSON.stringify({
      store,
      sources: { stripe: { provider: "stripe", secrets: [STRIPE_SECRET] } },
      ...extra,
    }),
  );
  const profile = cpuProfile ? ["--cpu-prof", "--cpu-prof-dir", join(dir, "profile")] : [];
  const cli = [join(repoRoot, "bin/hookinbox.mjs"), "start", "--config", config, "--port", "0"];
  return launch([...profile, ...cli], dir, "/webhooks/stripe");
}

/** The schema the PostgreSQL durable stub creates its `events` and `receipts` in. */
export const STUB_SCHEMA = "stub";

/**
 * The least a durable PostgreSQL gateway can do (bench/postgres/durable-stub.ts): HMAC on the raw
 * bytes, id by a scan, each event-loop turn's requests in one multi-row INSERT … ON CONFLICT DO
 * NOTHING of events plus receipts, up to 4 batches in flight, 200 after COMMIT. `url`: its
 * database; it creates its tables in STUB_SCHEMA.
 */
export function startDurableStubPostgres(url: string): Promise<ServerUnderTest> {
  const args = [
    join(repoRoot, "bin/run-ts.mjs"),
    join(repoRoot, "bench/postgres/durable-stub.ts"),
    url,
    STUB_SCHEMA,
  ];
  return launch(args, repoRoot, "/webhooks/stripe");
}
