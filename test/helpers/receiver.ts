// A real HTTP server on loopback that plays a destination app: it records every request (raw
// body bytes and headers) and answers with what the test's responder says.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
  readonly at: number;
}

export interface Reply {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** Wait this long before answering (a slow app). */
  readonly delayMs?: number;
}

export type Responder = (request: ReceivedRequest, index: number) => Reply | Promise<Reply>;

export interface Receiver {
  readonly url: string;
  readonly port: number;
  readonly requests: ReceivedRequest[];
  /** The most requests in flight at once. */
  maxInFlight(): number;
  respond(responder: Responder): void;
  close(): Promise<void>;
}

function flatHeaders(message: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

/** Starts a receiver on 127.0.0.1 (answers 200 "ok" until told otherwise). */
export async function startReceiver(
  responder: Responder = () => ({ status: 200, body: "ok" }),
): Promise<Receiver> {
  let current = responder;
  const requests: ReceivedRequest[] = [];
  let inFlight = 0;
  let most = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    inFlight++;
    most = Math.max(most, inFlight);
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", async () => {
      const request: ReceivedRequest = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: flatHeaders(req),
        body: Buffer.concat(chunks),
        at: Date.now(),
      };
      const index = requests.length;
      requests.push(request);
      try {
        const reply = await current(request, index);
        if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
        if (!res.destroyed) {
          res.writeHead(reply.status, reply.headers ?? {});
          res.end(reply.body ?? "");
        }
      } catch {
        res.destroy();
      } finally {
        inFlight--;
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    requests,
    maxInFlight: () => most,
    respond(next) {
      current = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
