// Open-loop client at a fixed offered rate (wrk2-like), run as its own process:
//   node bin/run-ts.mjs bench/ingest/paced-client.ts <url> <slice file> <rate/s> <connections> <acks file>
// Sends every request of the slice at `rate`, spread evenly (a 1 ms tick sends what is due),
// over keep-alive sockets with no pipelining, and prints one JSON line of results.
//
// Why not autocannon's `overallRate`: autocannon 9 gives each connection a per-second budget
// and sends it back-to-back at the start of each second (lib/httpClient.js, reqsMadeThisSecond),
// so "5,000 req/s" is a saturating burst followed by idle time, and its p99 is saturation p99.
//
// Latency runs from the tick that found the request due (timer lateness excluded) to the last
// byte of the response; time spent waiting for a free connection counts (no coordinated
// omission). Percentiles are exact (sorted samples, sub-ms).
import { writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { readRequests } from "./requests.ts";

const [urlArg = "", file = "", rateArg = "5000", connArg = "50", acksFile = ""] =
  process.argv.slice(2);
const url = new URL(urlArg);
const requests = readRequests(file, url.host, url.pathname);
const rate = Number(rateArg);

interface Conn {
  socket: Socket;
  busySince: number | null;
  buffered: Buffer;
}

const latencies: number[] = [];
const acks: string[] = [];
const pending: number[] = []; // due times of requests waiting for a free connection
let next = 0; // index of the next request to schedule
let answered = 0;
let ok = 0;
let non2xx = 0;
/** Non-2xx answers by "status code" (the body's `code`, e.g. "503 HOOKINBOX_STORE_UNAVAILABLE"). */
const non2xxBy: Record<string, number> = {};
let socketErrors = 0;

const conns: Conn[] = [];
for (let k = 0; k < Number(connArg); k++) {
  const conn: Conn = {
    socket: connect(Number(url.port), url.hostname),
    busySince: null,
    buffered: Buffer.alloc(0),
  };
  conn.socket.setNoDelay(true);
  conn.socket.on("data", (chunk: Buffer) => onData(conn, chunk));
  conn.socket.on("error", () => {
    socketErrors++;
  });
  conns.push(conn);
}
await Promise.all(conns.map((c) => new Promise((ok) => c.socket.once("connect", ok))));

function onData(conn: Conn, chunk: Buffer): void {
  conn.buffered = conn.buffered.length ? Buffer.concat([conn.buffered, chunk]) : chunk;
  const headEnd = conn.buffered.indexOf("\r\n\r\n");
  if (headEnd < 0) return;
  const head = conn.buffered.toString("latin1", 0, headEnd);
  const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
  if (conn.buffered.length < headEnd + 4 + length) return;
  const body = conn.buffered.toString("utf8", headEnd + 4, headEnd + 4 + length);
  conn.buffered = conn.buffered.subarray(headEnd + 4 + length);
  latencies.push(performance.now() - (conn.busySince ?? 0));
  conn.busySince = null;
  answered++;
  const status = Number(head.slice(9, 12));
  if (status >= 200 && status < 300) {
    ok++;
    const id = /"eventId":"([^"]+)"/.exec(body)?.[1];
    if (id) acks.push(id);
  } else {
    non2xx++;
    const code = /"code":"([^"]+)"/.exec(body)?.[1];
    const key = code ? `${status} ${code}` : String(status);
    non2xxBy[key] = (non2xxBy[key] ?? 0) + 1;
  }
  dispatch();
}

let sentCount = 0;
function dispatch(): void {
  for (const conn of conns) {
    if (pending.length === 0) return;
    if (conn.busySince !== null || conn.socket.destroyed) continue;
    conn.busySince = pending.shift() ?? performance.now();
    conn.socket.write(requests[sentCount++]!);
  }
}

const started = performance.now();
await new Promise<void>((resolve) => {
  const tick = setInterval(() => {
    const now = performance.now();
    const due = Math.min(requests.length, Math.floor(((now - started) / 1000) * rate));
    for (; next < due; next++) pending.push(now);
    dispatch();
    const stuck = now - started > (requests.length / rate) * 1000 + 30_000;
    if (answered + socketErrors >= requests.length || stuck) {
      clearInterval(tick);
      resolve();
    }
  }, 1);
});
const seconds = (performance.now() - started) / 1000;
for (const conn of conns) conn.socket.destroy();

latencies.sort((a, b) => a - b);
const at = (q: number) =>
  latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
writeFileSync(acksFile, acks.length ? `${acks.join("\n")}\n` : "");
process.stdout.write(
  `${JSON.stringify({
    completed: answered,
    seconds,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    maxMs: latencies.at(-1) ?? 0,
    socketErrors,
    sent: sentCount,
    ok,
    non2xx,
    non2xxBy,
    wraps: 0,
  })}\n`,
);
