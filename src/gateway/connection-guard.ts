import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { AddressList } from "../ingest/ip-allow.ts";
import { normaliseAddress } from "../ingest/ip-allow.ts";
import { rejectLimitKey } from "../ingest/reject-limiter.ts";

/** Limits on the gateway's connections. */
export interface ConnectionLimits {
  /** Open connections at most. Past it the longest-idle one is closed to admit the new one. */
  readonly maxConnections: number;
  /** A connection that has not sent its first request closes after this. */
  readonly idleTimeoutMs: number;
  /**
   * Open connections one remote address may hold (IPv4 per address, IPv6 per /64); null: no
   * share. Connections over it are reset at once.
   */
  readonly maxConnectionsPerAddress?: number | null;
  /**
   * How long a connection refused for its address's share is held, unread, before it is reset
   * (default 2 s): a client that reconnects as soon as it is reset would otherwise cost an accept
   * and a close per turn, tens of thousands a second, and starve the requests of other addresses
   * of CPU. At most `maxConnections` are held at once; past that, refused ones are reset at once.
   */
  readonly refusedHoldMs?: number;
  /** Socket peers exempt from the per-address share (`http.trustedProxies`). */
  readonly exempt?: AddressList | null;
  /** Called for each connection the guard closes, with why. */
  readonly onClosed?: (reason: ConnectionClosedReason) => void;
}

/**
 * Why the guard closed a connection: `idle` (the longest-idle, to admit a new one), `refused`
 * (at the cap, nothing could be closed for it), `address-share` (its address already held its
 * share), `fair-share` (a busy connection of the address holding the most, closed at the cap to
 * admit one from an address holding fewer).
 */
export type ConnectionClosedReason = "idle" | "refused" | "address-share" | "fair-share";

/** What the guard has done so far (tests and logs). */
export interface ConnectionGuard {
  /** Connections open now (not counting refused ones held before their reset). */
  open(): number;
  /** Refused connections held now, unread, until their reset. */
  held(): number;
  /** Resets every held connection now (the gateway's shutdown). */
  releaseHeld(): void;
  /** Connections closed, by reason (`evicted` counts the idle ones). */
  readonly counts: { evicted: number; refused: number; addressShare: number; fairShare: number };
}

/**
 * Keeps silent, idle and slow connections from starving the gateway. A connection that has not
 * sent a request is closed after `idleTimeoutMs` (Node's own header and request timeouts do not
 * catch a socket that never sends a byte). One remote address (IPv6: its /64) may hold at most
 * `maxConnectionsPerAddress`: past it a new connection from it closes that address's own
 * longest-idle one, and is reset at once when all of them have a request in progress. When `maxConnections` are
 * open, a new connection is admitted by closing, in order: the longest-idle one (no request in
 * progress: never sent one, or between keep-alive requests); else the oldest connection of the
 * address holding the most, when that address holds at least two more than the newcomer's (so
 * many addresses trickling bodies cannot hold every slot against one that sends a real request).
 * Only otherwise is the new one refused. A connection refused for its address's share is held,
 * unread, for `refusedHoldMs` before its reset, which slows a client that reconnects in a loop
 * to one turn per hold. File descriptors thus stay bounded by twice `maxConnections`.
 *
 * @example
 * ```ts
 * const guard = guardConnections(server, {
 *   maxConnections: 1000,
 *   idleTimeoutMs: 10_000,
 *   maxConnectionsPerAddress: 100,
 * });
 * ```
 */
export function guardConnections(server: Server, limits: ConnectionLimits): ConnectionGuard {
  // Insertion order is idle order: the first entry has been idle the longest.
  const idle = new Set<Socket>();
  // Open connections per address key; insertion order is age order. Exempt peers are not here.
  const byAddress = new Map<string, Set<Socket>>();
  const perAddress = limits.maxConnectionsPerAddress ?? null;
  const holdMs = limits.refusedHoldMs ?? 2_000;
  // Refused for their address's share, waiting for their reset.
  const held = new Map<Socket, NodeJS.Timeout>();
  const reset = (socket: Socket) => {
    clearTimeout(held.get(socket));
    held.delete(socket);
    if (!socket.destroyed) socket.resetAndDestroy();
  };
  /** Resets a refused connection after the hold, or at once when too many are held. */
  const refuse = (socket: Socket) => {
    if (holdMs <= 0 || held.size >= limits.maxConnections) {
      // A reset leaves no TIME_WAIT behind for a client that reconnects at once.
      socket.resetAndDestroy();
      return;
    }
    socket.pause();
    socket.on("error", () => undefined);
    socket.once("close", () => {
      clearTimeout(held.get(socket));
      held.delete(socket);
    });
    held.set(
      socket,
      setTimeout(() => reset(socket), holdMs),
    );
  };
  let open = 0;
  const counts = { evicted: 0, refused: 0, addressShare: 0, fairShare: 0 };
  const closed = (reason: ConnectionClosedReason) => {
    if (reason === "idle") counts.evicted++;
    else if (reason === "refused") counts.refused++;
    else if (reason === "address-share") counts.addressShare++;
    else counts.fairShare++;
    limits.onClosed?.(reason);
  };

  const keys = new WeakMap<Socket, string | null>();
  // Counted out as soon as it is chosen to close, so the next newcomer sees the shares as they
  // will be (its close event comes later).
  const forget = (socket: Socket) => {
    idle.delete(socket);
    const key = keys.get(socket);
    if (key === undefined || key === null) return;
    const group = byAddress.get(key);
    group?.delete(socket);
    if (group?.size === 0) byAddress.delete(key);
  };

  const markIdle = (socket: Socket) => {
    idle.delete(socket);
    if (!socket.destroyed) idle.add(socket);
  };

  /** The connections of the address holding the most, if it holds `more` than `than`. */
  const heaviest = (than: number, more: number): Set<Socket> | null => {
    let found: Set<Socket> | null = null;
    for (const group of byAddress.values()) {
      if (group.size >= than + more && (!found || group.size > found.size)) found = group;
    }
    return found;
  };

  /** The longest-idle connection that passes `fits`. */
  const longestIdle = (fits: (held: Socket) => boolean): Socket | undefined => {
    for (const held of idle) if (fits(held)) return held;
    return undefined;
  };
  /** Connections its address holds (an exempt peer's: unbounded). */
  const holding = (held: Socket): number => {
    const key = keys.get(held);
    return key === null || key === undefined
      ? Number.POSITIVE_INFINITY
      : (byAddress.get(key)?.size ?? 0);
  };

  /** Decides on a new connection before node:http sees it: false when it was closed. */
  const admit = (socket: Socket): boolean => {
    const peer = socket.remoteAddress;
    const key =
      peer === undefined || limits.exempt?.has(normaliseAddress(peer))
        ? null
        : rejectLimitKey(peer);
    const group = key === null ? undefined : byAddress.get(key);
    const own = group?.size ?? 0;
    let victim: Socket | undefined;
    if (perAddress !== null && group !== undefined && own >= perAddress) {
      // Its own longest-idle connection makes room; with none idle the newcomer is reset.
      victim = longestIdle((held) => keys.get(held) === key);
      if (victim === undefined) {
        closed("address-share");
        refuse(socket);
        return false;
      }
      closed("idle");
    } else if (open >= limits.maxConnections) {
      // The address holding the most gives up a connection (its longest-idle, else its oldest)
      // when it holds two more than the newcomer's; else the longest-idle connection of an
      // address holding at least as many as the newcomer's. A fresh connection from an address
      // holding few is thus never closed to admit one from an address holding many.
      const heavy = heaviest(own, 2);
      if (heavy) {
        victim = longestIdle((held) => heavy.has(held));
        closed(victim ? "idle" : "fair-share");
        victim ??= heavy.values().next().value;
      } else {
        victim = longestIdle((held) => holding(held) >= own);
        if (victim === undefined) {
          closed("refused");
          socket.destroy();
          return false;
        }
        closed("idle");
      }
    }
    if (victim) {
      forget(victim);
      victim.destroy();
    }
    open++;
    keys.set(socket, key);
    if (key !== null) {
      const mine = group ?? new Set<Socket>();
      if (!group) byAddress.set(key, mine);
      mine.add(socket);
    }
    socket.once("close", () => {
      open--;
      forget(socket);
    });
    markIdle(socket);
    // Until its first request. A timeout nobody else handles destroys the socket (node:http).
    socket.setTimeout(limits.idleTimeoutMs);
    return true;
  };

  // A closed connection never reaches node:http, which would set up a parser for it first: a
  // client that reconnects as fast as it is reset costs an accept and a close, no more.
  const emit = server.emit.bind(server) as (event: string | symbol, ...args: unknown[]) => boolean;
  server.emit = ((event: string | symbol, ...args: unknown[]) =>
    event === "connection" && !admit(args[0] as Socket)
      ? false
      : emit(event, ...args)) as typeof server.emit;

  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    idle.delete(socket);
    socket.setTimeout(0);
    // Between keep-alive requests node:http's keepAliveTimeout applies; meanwhile the
    // connection is idle again, so it may be closed first to admit a new one.
    res.once("finish", () => markIdle(socket));
  });

  return {
    open: () => open,
    held: () => held.size,
    releaseHeld: () => {
      for (const socket of [...held.keys()]) reset(socket);
    },
    counts,
  };
}
