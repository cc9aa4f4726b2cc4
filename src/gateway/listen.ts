import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { hookinboxError } from "../errors.ts";

/**
 * Listens on `host:port` and resolves with the base URL actually bound (port 0 picks one). A
 * port another process holds is `HOOKINBOX_PORT_IN_USE`, naming host and port.
 *
 * @example
 * ```ts
 * const url = await listen(createServer(handler), "127.0.0.1", 0); // "http://127.0.0.1:40123"
 * ```
 */
export async function listen(server: Server, host: string, port: number): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    const fail = (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE") {
        reject(
          hookinboxError(
            "HOOKINBOX_PORT_IN_USE",
            `${host}:${port} is taken by another process; stop it or pass --port (or set http.port)`,
            error,
          ),
        );
      } else reject(error);
    };
    server.once("error", fail);
    server.listen(port, host, () => {
      server.off("error", fail);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return `http://${shownHost}:${address.port}`;
}
