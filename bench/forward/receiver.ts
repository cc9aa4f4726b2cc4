// The destination under bench/forward.ts, in its own process: a bare node:http server that reads
// each POST and answers 200. It notes when each event first arrived (process.hrtime.bigint(),
// CLOCK_MONOTONIC, comparable with the parent's readings) by the `x-bench-id` header the parent
// put on its request, which hookinbox forwards (forwardHeaders), and reports over IPC.
// While pushing arrivals (the one-at-a-time latency runs, where its cost is a few µs per event)
// it also checks the Standard Webhooks signature of each signed request with the secret given as
// its argument, and counts the checked and the bad ones: the forwarders sign correctly.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { standardWebhooksKey } from "../../src/providers/standard-webhooks.ts";

const key = process.argv[2] ? standardWebhooksKey(process.argv[2]) : undefined;
let checked = 0;
let bad = 0;

/** Counts one Standard Webhooks signature check (any v1 of the header may match). */
function checkSignature(req: IncomingMessage, body: Buffer): void {
  const signature = req.headers["webhook-signature"];
  if (!key || typeof signature !== "string") return;
  checked++;
  const expected = createHmac("sha256", key)
    .update(`${req.headers["webhook-id"]}.${req.headers["webhook-timestamp"]}.`)
    .update(body)
    .digest();
  const ok = signature.split(" ").some((part) => {
    const given = Buffer.from(part.slice(3), "base64");
    return (
      part.startsWith("v1,") && given.length === expected.length && timingSafeEqual(given, expected)
    );
  });
  if (!ok) bad++;
}

const arrivals = new Map<string, bigint>();
let requests = 0;
/** While set, each first arrival is pushed to the parent at once (latency runs). */
let push = false;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => {
    if (push) chunks.push(chunk);
  });
  req.on("end", () => {
    const at = process.hrtime.bigint();
    if (push) checkSignature(req, Buffer.concat(chunks));
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
    checked = 0;
    bad = 0;
    push = false;
  }
  if (message.kind === "count")
    process.send?.({ kind: "count", distinct: arrivals.size, requests, checked, bad });
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
