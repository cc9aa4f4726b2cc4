import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/** Limits on the gateway's connections. */
export interface ConnectionLimits {
  /** Open connections at most. Past it the longest-idle one is closed to admit the new one. */
  readonly maxConnections: number;
  /** A connection that has not sent its first request closes after this. */
  readonly idleTimeoutMs: number;
}

/** What the guard has done so far (tests and logs). */
export interface ConnectionGuard {
  /** Connections open now. */
  open(): number;
  /** Idle connections closed to admit a new one, and new ones refused because none was idle. */
  readonly counts: { evicted: number; refused: number };
}

/**
 * Keeps silent and idle connections from starving the gateway. A connection that has not
 * sent a request is closed after `idleTimeoutMs` (Node's own header and request timeouts do not
 * catch a socket that never sends a byte), and when `maxConnections` are open the longest-idle
 * one (no request in progress: never sent one, or between keep-alive requests) is closed so the
 * new connection is served. Only when every open connection has a request
 * in progress is a new one refused. File descriptors thus stay bounded by `maxConnections`, and
 * a flood of sockets that never send a byte cannot lock real senders out.
 *
 * @example
 * ```ts
 * const guard = guardConnections(server, { maxConnections: 1000, idleTimeoutMs: 10_000 });
 * ```
 */
export function guardConnections(server: Server, limits: ConnectionLimits): ConnectionGuard {
  // Insertion order is idle order: the first entry has been idle the longest.
  const idle = new Set<Socket>();
  let open = 0;
  const counts = { evicted: 0, refused: 0 };

  const markIdle = (socket: Socket) => {
    idle.delete(socket);
    if (!socket.destroyed) idle.add(socket);
  };

  server.on("connection", (socket: Socket) => {
    if (open >= limits.maxConnections) {
      const oldest = idle.values().next();
      if (oldest.done) {
        counts.refused++;
        socket.destroy();
        return;
      }
      counts.evicted++;
      idle.delete(oldest.value);
      oldest.value.destroy();
    }
    open++;
    socket.once("close", () => {
      open--;
      idle.delete(socket);
    });
    markIdle(socket);
    // Until its first request. A timeout nobody else handles destroys the socket (node:http).
    socket.setTimeout(limits.idleTimeoutMs);
  });

  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    idle.delete(socket);
    socket.setTimeout(0);
    // Between keep-alive requests node:http's keepAliveTimeout applies; meanwhile the
    // connection is idle again, so it may be closed first to admit a new one.
    res.once("finish", () => markIdle(socket));
  });

  return { open: () => open, counts };
}
