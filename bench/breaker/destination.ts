// The destination under bench/breaker.ts, in its own process: a bare node:http server playing
// the app, driven over IPC.
// - `flaky` (on by default): event e fails its first k(e) attempts with a 500, k(e) in {0, 1, 2}
//   drawn from a seeded hash of its `x-bench-id` (the same for every run), then answers 200.
//   `healthy` turns that off (every request 200).
// - `down`: stops listening and resets every connection (new ones are refused: ECONNREFUSED);
//   `up`: listens again on the same port and answers with the time it did.
// It notes the first 2xx answer per event (process.hrtime.bigint(), CLOCK_MONOTONIC, comparable
// with the parent's) and how many 2xx each got, for exactly-once.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** k(e): how many first attempts of event `id` fail (0, 1 or 2), from a seeded string hash. */
function failuresOf(id: string): number {
  let h = 0x811c9dc5 ^ 150;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return ((h ^ (h >>> 16)) >>> 0) % 3;
}

let flaky = true;
const attempts = new Map<string, number>();
const firstOk = new Map<string, bigint>();
const okCount = new Map<string, number>();
let requests = 0;

const server: Server = createServer((req, res) => {
  req.on("data", () => undefined);
  req.on("end", () => {
    const at = process.hrtime.bigint();
    requests++;
    const id = String(req.headers["x-bench-id"] ?? "");
    const attempt = (attempts.get(id) ?? 0) + 1;
    attempts.set(id, attempt);
    if (flaky && attempt <= failuresOf(id)) {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end("flaky");
      return;
    }
    if (!firstOk.has(id)) firstOk.set(id, at);
    okCount.set(id, (okCount.get(id) ?? 0) + 1);
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("ok");
  });
});
server.keepAliveTimeout = 60_000;
let port = 0;

process.on("message", (message: { kind: string }) => {
  const reply = (body: Record<string, unknown>) => process.send?.({ kind: message.kind, ...body });
  switch (message.kind) {
    case "healthy":
      flaky = false;
      reply({});
      break;
    case "down":
      server.close();
      server.closeAllConnections();
      reply({ at: String(process.hrtime.bigint()) });
      break;
    case "up":
      server.listen(port, "127.0.0.1", () => reply({ at: String(process.hrtime.bigint()) }));
      break;
    case "arrivals":
      reply({
        requests,
        items: [...firstOk].map(([id, at]) => [id, String(at)]),
        duplicates: [...okCount.values()].filter((n) => n > 1).length,
      });
      break;
    case "stop":
      server.close(() => process.exit(0));
      server.closeAllConnections();
      break;
  }
});

server.listen(0, "127.0.0.1", () => {
  port = (server.address() as AddressInfo).port;
  process.send?.({ kind: "listening", port });
});
