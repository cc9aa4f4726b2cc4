import { createConnection, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP proxy on loopback in front of a server (PostgreSQL here), which the test can cut: every
 * proxied connection is destroyed at once and new ones are refused until `restore()`, as when the
 * database restarts or the network drops.
 */
export interface TcpProxy {
  readonly port: number;
  /** Connections accepted so far (both sides count as one). */
  connections(): number;
  /** Sockets open now (a proxied connection counts its two sides). */
  openSockets(): number;
  /** Destroys every proxied connection and stops listening (new connections are refused). */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** Where a proxy connects: fixed, or asked on each connection (a server that starts later). */
type ProxyTarget = { host: string; port: number } | (() => { host: string; port: number });

export async function startTcpProxy(target: ProxyTarget): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  };
  const onConnection = (client: Socket) => {
    accepted++;
    const upstream = createConnection(typeof target === "function" ? target() : target);
    track(client);
    track(upstream);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  };
  let server: Server = createServer(onConnection);
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve((server.address() as { port: number }).port);
      });
    });
  const port = await listen(0);
  const stop = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      // A reset, not a polite close: both the driver and the server see the connection die.
      for (const socket of sockets) socket.resetAndDestroy();
    });
  return {
    port,
    connections: () => accepted,
    openSockets: () => sockets.size,
    cut: stop,
    async restore() {
      server = createServer(onConnection);
      await listen(port);
    },
    close: stop,
  };
}
