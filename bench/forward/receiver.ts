// The destination under bench/forward.ts, in its own process: a bare node:http server that reads
// each POST and answers 200. It notes when each event first arrived (process.hrtime.bigint(),
// CLOCK_MONOTONIC, comparable with the parent's readings) by the `x-bench-id` header the parent
// put on its request, which hookinbox forwards (forwardHeaders), and reports over IPC.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

const arrivals = new Map<string, bigint>();
let requests = 0;
/** While set, each first arrival is pushed to the parent at once (latency runs). */
let push = false;

const server = createServer((req, res) => {
  req.on("data", () => undefined);
  req.on("end", () => {
    const at = process.hrtime.bigint();
    requests++;
    const id = String(req.headers["x-bench-id"] ?? "");
    if (!arrivals.has(id)) {
      arrivals.set(id, at);
      if (push) process.send?.({ kind: "arrival", id, at: String(at) });
    }
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("ok");
  });
});
server.keepAliveTimeout = 60_000;

process.on("message", (message: { kind: string }) => {
  if (message.kind === "push") push = true;
  if (message.kind === "reset") {
    arrivals.clear();
    requests = 0;
    push = false;
  }
  if (message.kind === "count")
    process.send?.({ kind: "count", distinct: arrivals.size, requests });
  if (message.kind === "arrivals")
    process.send?.({
      kind: "arrivals",
      items: [...arrivals].map(([id, at]) => [id, String(at)]),
    });
  if (message.kind === "stop") server.close(() => process.exit(0));
});

server.listen(0, "127.0.0.1", () => {
  process.send?.({ kind: "listening", port: (server.address() as AddressInfo).port });
});
