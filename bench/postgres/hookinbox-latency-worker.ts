// Child of bench/postgres.ts: a hookinbox worker process for the enqueue-to-start latency run.
//
//   node ./bin/run-ts.mjs bench/postgres/hookinbox-latency-worker.ts <store url>
//
// createInbox on the PostgreSQL store with one handler for "stripe:*" whose first statement sends
// process.hrtime.bigint() to the parent over IPC, and inbox.startWorker({ concurrency: 10 }). The
// worker is woken by LISTEN/NOTIFY (the store's listener connection): the parent's accepts commit
// in another process. CLOCK_MONOTONIC is one clock for the whole machine, so the parent compares
// that reading with its own taken before the accept. "stop" from the parent closes the inbox.
import { createInbox } from "../../src/inbox.ts";
import { STRIPE_SECRET } from "../ingest/requests.ts";
import { emitResult } from "../queue-events.ts";
import { tell } from "./child.ts";

const [url = ""] = process.argv.slice(2);
if (!url) throw new Error("usage: hookinbox-latency-worker.ts <store url>");
const inbox = createInbox(
  {
    store: url,
    sources: { stripe: { provider: "stripe", secrets: [STRIPE_SECRET] } },
    handlers: {
      "stripe:*": async (event: { dedupKey: string }) => {
        const at = process.hrtime.bigint();
        tell({ id: event.dedupKey, at: String(at) });
      },
    },
  },
  { env: {} },
);
await inbox.ready();
const worker = inbox.startWorker({ concurrency: 10 });
// Let the LISTEN connection come up before the first event (the warm-up events cover the rest).
await new Promise((resolve) => setTimeout(resolve, 300));
tell({ ready: true });
process.on("message", async (message) => {
  if (message !== "stop") return;
  const stats = worker.stats();
  await inbox.close();
  emitResult({ system: "hookinbox", stats });
  process.disconnect();
  setTimeout(() => process.exit(0), 200); // stdout drains first
});
