// Child of bench/postgres.ts: a graphile-worker runner process for the enqueue-to-start latency run.
//
//   node ./bin/run-ts.mjs bench/postgres/graphile-latency-worker.ts <db url> <mode>
//
// run({ concurrency: 10, … }) with one task whose first statement sends process.hrtime.bigint()
// to the parent over IPC; the parent adds each job with utils.addJob from its own process, and
// graphile-worker wakes this runner by LISTEN/NOTIFY ("jobs:insert"). mode: see graphilePreset.
import { Logger, run } from "graphile-worker";
import { emitResult } from "../queue-events.ts";
import { graphilePreset, tell } from "./child.ts";

const [url = "", mode = "default"] = process.argv.slice(2);
if (!url) throw new Error("usage: graphile-latency-worker.ts <db url> <mode>");
let calls = 0;
const runner = await run({
  connectionString: url,
  concurrency: 10,
  noHandleSignals: true,
  logger: new Logger(() => () => undefined),
  preset: graphilePreset(mode, 10),
  taskList: {
    noop: async (payload) => {
      const at = process.hrtime.bigint();
      tell({ id: (payload as { id: string }).id, at: String(at) });
      calls++;
    },
  },
});
await new Promise((resolve) => setTimeout(resolve, 300));
tell({ ready: true });
process.on("message", async (message) => {
  if (message !== "stop") return;
  await runner.stop();
  emitResult({ system: "graphile-worker", mode, calls });
  process.disconnect();
  setTimeout(() => process.exit(0), 200); // stdout drains first
});
