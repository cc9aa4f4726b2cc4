// The HTTP half of the durable stubs (SQLite: durable-stub.ts; PostgreSQL:
// bench/postgres/durable-stub.ts): read the raw bytes, check the Stripe HMAC on them, scan the
// event id from the first bytes (no JSON.parse), then hand the request to the stub's writer,
// which answers 200 only after its commit. Forged requests get 401, ones without an id 400.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { STRIPE_SECRET } from "./requests.ts";

/** A verified request with its id, waiting for its writer's commit. */
export interface StubRequest {
  readonly id: string;
  /** The raw body, in an ArrayBuffer of its own (transferable to a worker thread). */
  readonly body: Buffer;
  readonly remote: string | null;
  /** Answers 200 with hookinbox's answer shape; call only after the commit. */
  reply(eventId: string, duplicate: boolean): void;
}

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}

/** Stripe's scheme on the raw bytes: HMAC-SHA256 of `${t}.${body}`, any v1 may match. */
function verified(header: string | undefined, body: Buffer): boolean {
  if (!header) return false;
  let t = "";
  const v1: string[] = [];
  for (const part of header.split(",")) {
    const eq = part.indexOf("=");
    const key = part.slice(0, eq);
    if (key === "t") t = part.slice(eq + 1);
    else if (key === "v1") v1.push(part.slice(eq + 1));
  }
  const seconds = Number(t);
  if (!Number.isFinite(seconds) || Math.abs(Date.now() / 1000 - seconds) > 300) return false;
  const expected = createHmac("sha256", STRIPE_SECRET).update(`${t}.`).update(body).digest();
  return v1.some((hex) => {
    const given = Buffer.from(hex, "hex");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

const ID_KEY = Buffer.from('"id":"');
/** The top-level `"id":"…"` of a Stripe event, found in the first bytes (Stripe puts it first). */
function scanId(body: Buffer): string | null {
  const at = body.indexOf(ID_KEY);
  if (at < 0 || at > 64) return null;
  const start = at + ID_KEY.length;
  const end = body.indexOf(34, start); // closing quote
  if (end < 0 || end - start > 255) return null;
  return body.toString("latin1", start, end);
}

/**
 * Serves POSTs on 127.0.0.1 (a free port, announced on stderr as "<name> listening on <url>",
 * the line the bench's launcher waits for), passing each verified request to `accept`. On
 * SIGTERM: stops accepting, then awaits `close` (the writer's last commits) and exits 0.
 */
export function serveStub(
  name: string,
  accept: (request: StubRequest) => void,
  close: () => Promise<void>,
): void {
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
    });
    req.on("end", () => {
      // An ArrayBuffer of its own (not a slice of the pool), so it can be transferred.
      const body = Buffer.from(new ArrayBuffer(size));
      let offset = 0;
      for (const chunk of chunks) offset += chunk.copy(body, offset);
      if (!verified(req.headers["stripe-signature"] as string | undefined, body)) {
        send(res, 401, '{"ok":false}');
        return;
      }
      const id = scanId(body);
      if (id === null) {
        send(res, 400, '{"ok":false}');
        return;
      }
      accept({
        id,
        body,
        remote: req.socket.remoteAddress ?? null,
        reply: (eventId, duplicate) =>
          send(res, 200, `{"ok":true,"eventId":"${eventId}","duplicate":${duplicate}}`),
      });
    });
  });
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as AddressInfo;
    process.stderr.write(`${name} listening on http://127.0.0.1:${port}\n`);
  });
  process.once("SIGTERM", () =>
    server.close(() => {
      close().then(
        () => process.exit(0),
        (error: Error) => {
          process.stderr.write(`${name}: ${error.message}\n`);
          process.exit(1);
        },
      );
    }),
  );
}
