// Fallback saturation client when wrk is not installed, run as its own process:
//   node bin/run-ts.mjs bench/ingest/autocannon-client.ts <url> <slice file> <seconds> <conns> <acks file>
// setupRequest only picks the next pre-signed request (no HMAC, no JSON work per request).
// Prints one JSON line shaped like replay.lua's WRK_RESULT.
import { readFileSync, writeFileSync } from "node:fs";
import autocannon from "autocannon";

const [url = "", file = "", seconds = "10", conns = "50", acksFile = ""] = process.argv.slice(2);
const [prefix = "", suffix = "", ...lines] = readFileSync(file, "utf8").trimEnd().split("\n");
const signed = lines.map((line) => {
  const [signature = "", id = ""] = line.split("\t");
  return { signature, body: `${prefix}${id}${suffix}` };
});

let i = 0;
let wraps = 0;
let ok = 0;
const acks: string[] = [];
const latencies: number[] = [];
const instance = autocannon({
  url,
  connections: Number(conns),
  duration: Number(seconds),
  pipelining: 1,
  timeout: 10,
  requests: [
    {
      method: "POST",
      setupRequest: (request) => {
        if (i === signed.length) [i, wraps] = [0, wraps + 1];
        const next = signed[i++]!;
        return {
          ...request,
          headers: {
            "content-type": "application/json; charset=utf-8",
            "stripe-signature": next.signature,
          },
          body: next.body,
        };
      },
      onResponse: (status, body) => {
        if (status < 200 || status >= 300) return;
        ok++;
        const id = /"eventId":"([^"]+)"/.exec(body)?.[1];
        if (id) acks.push(id);
      },
    },
  ],
});
instance.on("response", (_client: unknown, _status: number, _bytes: number, ms: number) => {
  latencies.push(ms);
});
const result = await instance;
latencies.sort((a, b) => a - b);
const at = (q: number) => latencies[Math.floor(q * (latencies.length - 1))] ?? 0;
writeFileSync(acksFile, acks.length ? `${acks.join("\n")}\n` : "");
process.stdout.write(
  `${JSON.stringify({
    completed: result.requests.total,
    seconds: result.duration,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    maxMs: latencies.at(-1) ?? 0,
    socketErrors: result.errors + result.timeouts,
    sent: result.requests.sent,
    ok,
    non2xx: result.non2xx,
    wraps,
    lines: signed.length,
  })}\n`,
);
