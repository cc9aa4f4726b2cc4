// Enqueue-to-start latency, parent side (bench/postgres.ts is the enqueuing process).
//
// The worker runs in a child process (hookinbox-latency-worker.ts / graphile-latency-worker.ts);
// this process enqueues one event or job at a time and waits until its handler has started before
// sending the next, so this is the latency of an idle worker woken by LISTEN/NOTIFY, not of a
// queue under load. Latency = the handler's process.hrtime.bigint() (sent over IPC as its first
// statement) − this process's process.hrtime.bigint() just before the enqueue call. Both read
// CLOCK_MONOTONIC, one clock for the machine, so there is no wall-clock skew between processes.
//   hookinbox:       store.accept (openPostgresStore, its own pool) with targets ["stripe:*"]: the
//                    statement ingest runs after verification (event + receipt + delivery + NOTIFY).
//   graphile-worker: utils.addJob("noop", payload) (makeWorkerUtils, its own pool).
// Both carry the same ~2 KB Stripe event; ordering keys / queue names are not used here.
import { Logger, makeWorkerUtils } from "graphile-worker";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import type { AcceptInput } from "../../src/store/types.ts";
import { percentiles, plainBody } from "../queue-events.ts";
import { startChild } from "./child.ts";

export interface LatencyResult {
  readonly system: string;
  readonly measured: number;
  /** enqueue call → handler's first statement, ms */
  readonly start: ReturnType<typeof percentiles>;
  /** the enqueue call alone (commit included), ms */
  readonly enqueue: ReturnType<typeof percentiles>;
  readonly pass: boolean;
}

type Enqueue = (id: string) => Promise<unknown>;

async function measure(
  system: string,
  script: string,
  args: string[],
  open: () => Promise<{ enqueue: Enqueue; close: () => Promise<void> }>,
  warmup: number,
  count: number,
): Promise<LatencyResult> {
  const waiting = new Map<string, (at: bigint) => void>();
  let ready: () => void = () => undefined;
  const isReady = new Promise<void>((resolve) => {
    ready = resolve;
  });
  const child = startChild(script, args, (message) => {
    const m = message as { ready?: boolean; id?: string; at?: string };
    if (m.ready) ready();
    else if (m.id && m.at) waiting.get(m.id)?.(BigInt(m.at));
  });
  await Promise.race([isReady, child.result]);
  const { enqueue, close } = await open();
  const startMs: number[] = [];
  const enqueueMs: number[] = [];
  try {
    for (let i = 0; i < warmup + count; i++) {
      const id = `evt_lat_${system.replace(/\W/g, "")}_${i}`;
      let timeout: NodeJS.Timeout | undefined;
      const started = new Promise<bigint>((resolve, reject) => {
        waiting.set(id, resolve);
        timeout = setTimeout(() => reject(new Error(`${system}: ${id} never started`)), 10_000);
      });
      const t0 = process.hrtime.bigint();
      await enqueue(id);
      const t1 = process.hrtime.bigint();
      const at = await started;
      clearTimeout(timeout);
      waiting.delete(id);
      if (i < warmup) continue;
      startMs.push(Number(at - t0) / 1e6);
      enqueueMs.push(Number(t1 - t0) / 1e6);
    }
  } finally {
    await close();
    child.process.send("stop");
    await child.result.catch(() => undefined);
  }
  return {
    system,
    measured: startMs.length,
    start: percentiles(startMs),
    enqueue: percentiles(enqueueMs),
    pass: startMs.length === count,
  };
}

/** hookinbox: accept in this process, worker in a child. `storeUrl` carries ?schema=. */
export function hookinboxLatency(storeUrl: string, warmup: number, count: number) {
  return measure(
    "hookinbox",
    "hookinbox-latency-worker.ts",
    [storeUrl],
    async () => {
      const store = openPostgresStore(storeUrl);
      await store.migrate();
      const ts = Math.floor(Date.now() / 1000);
      return {
        enqueue: (id: string) => {
          const body = plainBody(id);
          const input: AcceptInput = {
            source: "stripe",
            identity: {
              dedupKey: id,
              type: "invoice.paid",
              occurredAt: ts * 1000,
              orderingKey: null,
              version: null,
            },
            body,
            headers: [
              ["Host", "127.0.0.1"],
              ["Content-Type", "application/json; charset=utf-8"],
              ["Stripe-Signature", `t=${ts},v1=${"0".repeat(64)}`],
              ["Content-Length", String(body.byteLength)],
            ],
            receivedAt: Date.now(),
            remoteAddress: "127.0.0.1",
            secretIndex: 0,
            targets: ["stripe:*"],
          };
          return store.accept(input);
        },
        close: () => store.close(),
      };
    },
    warmup,
    count,
  );
}

/** graphile-worker: addJob in this process, runner (mode "default" | "fast") in a child. */
export function graphileLatency(dbUrl: string, mode: string, warmup: number, count: number) {
  return measure(
    `graphile-worker ${mode}`,
    "graphile-latency-worker.ts",
    [dbUrl, mode],
    async () => {
      const utils = await makeWorkerUtils({
        connectionString: dbUrl,
        logger: new Logger(() => () => undefined),
      });
      const event = JSON.parse(plainBody("evt_lat").toString("utf8"));
      return {
        enqueue: (id: string) => utils.addJob("noop", { id, event: { ...event, id } }),
        close: async () => {
          await utils.release();
        },
      };
    },
    warmup,
    count,
  );
}
