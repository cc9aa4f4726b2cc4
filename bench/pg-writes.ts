// npm run bench:pg-writes [-- --events N]
//
// The rows each forwarded event writes on PostgreSQL (issue 24, "fewer writes per event on the
// hot tables"): `hookinbox start` on a fresh database forwards N Stripe events (each with its own
// ordering key under the Stripe preset) to a bare node:http destination; once every delivery is
// done the gateway stops (its backends flush their statistics as they exit), and this prints,
// per table, pg_stat_user_tables' row counters divided by N: inserts, updates (and how many of
// them were HOT: no index touched), deletes. Day partitions count under their parent. A count,
// not a timing: run it under the bench lock anyway, it loads the shared machine.

import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { eventPoster } from "./forward/post-events.ts";
import { createDatabase, databaseUrl, dropDatabase } from "./postgres/db.ts";
import { startHookinboxPostgres } from "./postgres/servers.ts";
import { signedEvents } from "./queue-events.ts";

const { values } = parseArgs({ options: { events: { type: "string", default: "2000" } } });
const EVENTS = Number(values.events);

/** One table's pg_stat_user_tables counters. */
interface Counters {
  ins: number;
  upd: number;
  hot: number;
  del: number;
}

/** The counters of every table of the store's schema (`hookinbox`), partitions summed under their parent (`events_p20261205` → `events`). */
async function counters(client: pg.Client): Promise<Map<string, Counters>> {
  await client.query("SELECT pg_stat_clear_snapshot()");
  const { rows } = await client.query(
    `SELECT relname, n_tup_ins::int AS ins, n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot,
            n_tup_del::int AS del FROM pg_stat_user_tables WHERE schemaname = 'hookinbox'`,
  );
  const byTable = new Map<string, Counters>();
  for (const r of rows) {
    const name = (r.relname as string).replace(/_p\d{8}$/, "");
    const sum = byTable.get(name) ?? { ins: 0, upd: 0, hot: 0, del: 0 };
    for (const k of ["ins", "upd", "hot", "del"] as const) sum[k] += r[k] as number;
    byTable.set(name, sum);
  }
  return byTable;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const arrived = new Set<string>();
  const destination = createServer((req, res) => {
    const id = req.headers["x-bench-id"];
    req.resume();
    req.on("end", () => {
      if (typeof id === "string") arrived.add(id);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => destination.listen(0, "127.0.0.1", resolve));
  const port = (destination.address() as { port: number }).port;
  const name = await createDatabase("writes");
  const dir = mkdtempSync(join(tmpdir(), "hookinbox-bench-pg-writes-"));
  const client = new pg.Client({ connectionString: databaseUrl(name) });
  try {
    const gateway = await startHookinboxPostgres(dir, databaseUrl(name), false, {
      destinations: {
        app: {
          url: `http://127.0.0.1:${port}/`,
          secret: "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD",
          allowPrivateNetworks: true,
          forwardHeaders: ["x-bench-id"],
          concurrency: 50,
        },
      },
      routes: [{ from: "stripe", to: "app" }],
      worker: { concurrency: 50 },
    });
    await client.connect();
    await sleep(1500); // the boot's own writes (migrations, destination rows) flushed first
    const before = await counters(client);
    const poster = eventPoster(50);
    const acked = await poster.postAllAcked(gateway.target, signedEvents("w", EVENTS));
    poster.close();
    for (;;) {
      const { rows } = await client.query(
        "SELECT count(*)::int AS n FROM hookinbox.deliveries WHERE status IN ('pending', 'blocked', 'running')",
      );
      if (arrived.size >= acked.length && rows[0].n === 0) break;
      await sleep(100);
    }
    await gateway.stop();
    await sleep(1500); // exited backends' statistics reach the collector
    const after = await counters(client);
    console.log(`events: ${EVENTS} posted, ${acked.length} acked, ${arrived.size} arrived`);
    console.log("| table | inserts/event | updates/event | of them HOT | deletes/event |");
    console.log("|---|---:|---:|---:|---:|");
    const per = (n: number) => (n / acked.length).toFixed(2);
    for (const [table, a] of [...after].sort(([x], [y]) => x.localeCompare(y))) {
      const b = before.get(table) ?? { ins: 0, upd: 0, hot: 0, del: 0 };
      const d = { ins: a.ins - b.ins, upd: a.upd - b.upd, hot: a.hot - b.hot, del: a.del - b.del };
      if (d.ins + d.upd + d.del === 0) continue;
      console.log(`| ${table} | ${per(d.ins)} | ${per(d.upd)} | ${per(d.hot)} | ${per(d.del)} |`);
    }
  } finally {
    await client.end().catch(() => undefined);
    destination.close();
    await dropDatabase(name);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
