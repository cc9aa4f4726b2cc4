// The baseline: a bare node:http server that reads the whole POST body and answers 200 with a
// small JSON body shaped like hookinbox's answer. Started as its own process by ingest.ts (a
// server inside the load generator's process shares its event loop and looks slower than it is).
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

const answer = JSON.stringify({ ok: true, eventId: "evt_bare", duplicate: false });

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    Buffer.concat(chunks); // the body, fully read, as a handler would get it
    res.writeHead(200, {
      "content-type": "application/json; charset=utf-8",
      "content-length": Buffer.byteLength(answer),
    });
    res.end(answer);
  });
});

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  // Same line shape as `hookinbox start`, so ingest.ts waits for both the same way.
  process.stderr.write(`bare server listening on http://127.0.0.1:${port}\n`);
});
process.once("SIGTERM", () => server.close(() => process.exit(0)));
