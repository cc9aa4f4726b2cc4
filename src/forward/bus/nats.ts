import type { JetStreamClient, NatsConnection } from "nats";
import type { BrokerDriver } from "./connection.ts";
import { importBrokerClient } from "./import-client.ts";
import { BusFailure, type BusMessage } from "./types.ts";

interface NatsSession {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly headers: typeof import("nats").headers;
}

/** Server and credentials from a nats:// or tls:// URL (user and password, or a token alone). */
function natsOptions(url: string) {
  const parsed = new URL(url);
  const user = decodeURIComponent(parsed.username);
  const pass = decodeURIComponent(parsed.password);
  return {
    servers: `${parsed.hostname}:${parsed.port || "4222"}`,
    ...(user && pass ? { user, pass } : user ? { token: user } : {}),
    ...(parsed.protocol === "tls:" ? { tls: {} } : {}),
  };
}

/**
 * NATS JetStream over the `nats` package: one connection that does not reconnect by itself (the
 * next publish opens a new one); each message is published to its subject with `Nats-Msg-Id` set
 * to the stable id, so the stream's duplicate window drops a retry of a publish that did land,
 * and the hookinbox headers; it is done on the stream's ack (a duplicate ack too). No stream on
 * the subject ("no responders") or an error ack is a `publish` failure.
 *
 * @example
 * ```ts
 * const publisher = sharedConnectionPublisher(url, natsDriver(url), logger, "bus");
 * ```
 */
export function natsDriver(url: string): BrokerDriver<NatsSession> {
  return {
    async open(lost) {
      const nats = await importBrokerClient<typeof import("nats")>("nats");
      const nc = await nats.connect({
        ...natsOptions(url),
        name: "hookinbox",
        reconnect: false,
        timeout: 5000,
      });
      void nc.closed().then((error) => lost(error ?? undefined));
      return { nc, js: nc.jetstream(), headers: nats.headers };
    },
    async send({ nc, js, headers }, message: BusMessage) {
      const h = headers();
      for (const [name, value] of Object.entries(message.headers)) h.set(name, value);
      try {
        const ack = await js.publish(message.address, message.body, {
          msgID: message.dedupId,
          headers: h,
        });
        return `${ack.stream}#${ack.seq}${ack.duplicate ? " (duplicate)" : ""}`;
      } catch (error) {
        const closed = nc.isClosed() || /CONNECTION_CLOSED|DISCONNECT/.test(codeOf(error));
        throw new BusFailure(closed ? "reset" : "publish", (error as Error).message);
      }
    },
    close: ({ nc }) => nc.close(),
  };
}

const codeOf = (error: unknown) => String((error as { code?: unknown }).code ?? "");
