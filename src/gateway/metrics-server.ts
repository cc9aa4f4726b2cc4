import { createServer, type Server } from "node:http";
import type { Inbox } from "../inbox.ts";
import { listen } from "./listen.ts";

/** A listener that serves only `GET /metrics`, apart from the public webhook listener. */
export interface MetricsServer {
  readonly server: Server;
  /** e.g. `http://127.0.0.1:9464/metrics` */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves the inbox's Prometheus metrics on a port of its own (`metrics.port`), so that scrapers
 * reach them on a private interface and the webhook listener never exposes them.
 *
 * @example
 * ```ts
 * const metrics = await startMetricsServer(inbox, "127.0.0.1", 9464);
 * console.log(metrics.url); // http://127.0.0.1:9464/metrics
 * ```
 */
export async function startMetricsServer(
  inbox: Inbox,
  host: string,
  port: number,
): Promise<MetricsServer> {
  const server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    if (path !== "/metrics" || !inbox.metrics) {
      response.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("not found\n");
      return;
    }
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    inbox.metrics.render().then(
      ({ contentType, body }) => {
        response.writeHead(200, { "content-type": contentType });
        response.end(request.method === "HEAD" ? undefined : body);
      },
      () => response.writeHead(500).end(),
    );
  });
  const base = await listen(server, host, port);
  return {
    server,
    url: `${base}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
