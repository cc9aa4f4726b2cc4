import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Listens on `host:port` and resolves with the base URL actually bound (port 0 picks one).
 *
 * @example
 * ```ts
 * const url = await listen(createServer(handler), "127.0.0.1", 0); // "http://127.0.0.1:40123"
 * ```
 */
export async function listen(server: Server, host: string, port: number): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return `http://${shownHost}:${address.port}`;
}
