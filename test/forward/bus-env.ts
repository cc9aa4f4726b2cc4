// One harness per broker for the queue-destination tests: the destination's config, a reader of
// every message the broker holds (in arrival order, across broker restarts), a restart, and a
// TCP proxy in front of the broker that a test cuts to take it "down".
import { connect as amqpConnect, type Channel, type ChannelModel } from "amqplib";
import { type NatsConnection, connect as natsConnect } from "nats";
import { createClient, RESP_TYPES } from "redis";
import {
  declareRabbitQueue,
  type OwnServer,
  rabbitUrl,
  requireRabbit,
  restartRabbit,
  startNatsServer,
  startRedisServer,
} from "../helpers/brokers.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";

/** A message as the broker holds it: headers (fields) as text, the body as bytes. */
export interface Received {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /** The broker's own id: the AMQP messageId, the JetStream Nats-Msg-Id, the Redis entry id. */
  readonly brokerId: string;
}

export interface BusHarness {
  readonly type: "amqp" | "nats" | "redis";
  /** The destination config (through the proxy when `viaProxy`). */
  destination(more?: Record<string, unknown>, viaProxy?: boolean): Record<string, unknown>;
  /** Every message received so far, in arrival order (reads what is new each call). */
  read(): Promise<readonly Received[]>;
  /** Restarts the broker (data kept); returns the ms it took. */
  restart(): Promise<number>;
  readonly proxy: TcpProxy;
  dispose(): Promise<void>;
}

const withPort = (url: string, port: number) => {
  const parsed = new URL(url);
  parsed.port = String(port);
  return parsed.toString().replace(/\/$/, "");
};

/**
 * RabbitMQ (the machine's): a unique durable topic exchange and queue bound to "#", deleted after.
 *
 * @example
 * ```ts
 * const bus = await amqpHarness();
 * ```
 */
export async function amqpHarness(): Promise<BusHarness> {
  await requireRabbit();
  const { name, model: setup } = await declareRabbitQueue("hookinbox-test");
  await setup.close();
  const proxy = await startTcpProxy({ host: "127.0.0.1", port: 5672 });
  const received: Received[] = [];
  let reader: { model: ChannelModel; channel: Channel } | null = null;
  return {
    type: "amqp",
    proxy,
    destination: (more = {}, viaProxy = false) => ({
      type: "amqp",
      url: viaProxy ? withPort(rabbitUrl, proxy.port) : rabbitUrl,
      exchange: name,
      ...more,
    }),
    async read() {
      try {
        if (!reader) {
          const model = await amqpConnect(rabbitUrl);
          model.on("error", () => undefined);
          const channel = await model.createChannel();
          channel.on("error", () => undefined);
          model.on("close", () => {
            reader = null;
          });
          reader = { model, channel };
        }
        for (;;) {
          const message = await reader.channel.get(name, { noAck: true });
          if (!message) break;
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(message.properties.headers ?? {}))
            headers[k] = String(v);
          if (message.properties.contentType)
            headers["content-type"] = String(message.properties.contentType);
          received.push({
            headers,
            body: message.content,
            brokerId: String(message.properties.messageId),
          });
        }
      } catch {
        reader = null; // the broker restarted: read again next time
      }
      return received;
    },
    restart: restartRabbit,
    async dispose() {
      await proxy.close();
      await reader?.model.close().catch(() => undefined);
      const model = await amqpConnect(rabbitUrl);
      const channel = await model.createChannel();
      await channel.deleteQueue(name);
      await channel.deleteExchange(name);
      await model.close();
    },
  };
}

/** Restart and dispose of a harness on a server of its own. */
function ownServerControls(server: OwnServer, proxy: TcpProxy, closeReader: () => Promise<void>) {
  return {
    async restart() {
      const started = Date.now();
      await server.restart();
      return Date.now() - started;
    },
    async dispose() {
      await proxy.close();
      await closeReader().catch(() => undefined);
      await server.dispose();
    },
  };
}

/**
 * NATS JetStream: a throwaway server with a file stream HOOKINBOX over "hookinbox.>".
 *
 * @example
 * ```ts
 * const bus = await natsHarness();
 * ```
 */
export async function natsHarness(): Promise<BusHarness> {
  const server: OwnServer = await startNatsServer();
  const nc: NatsConnection = await natsConnect({
    servers: `127.0.0.1:${server.port}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 50,
  });
  const jsm = await nc.jetstreamManager();
  await jsm.streams.add({ name: "HOOKINBOX", subjects: ["hookinbox.>"], storage: "file" as never });
  const proxy = await startTcpProxy({ host: "127.0.0.1", port: server.port });
  const received: Received[] = [];
  let next = 1;
  return {
    type: "nats",
    proxy,
    destination: (more = {}, viaProxy = false) => ({
      type: "nats",
      url: `nats://127.0.0.1:${viaProxy ? proxy.port : server.port}`,
      ...more,
    }),
    async read() {
      try {
        const info = await (await nc.jetstreamManager({ timeout: 2000 })).streams.info("HOOKINBOX");
        for (; next <= info.state.last_seq; next++) {
          const m = await jsm.streams.getMessage("HOOKINBOX", { seq: next });
          const headers: Record<string, string> = {};
          for (const key of m.header.keys()) headers[key.toLowerCase()] = m.header.get(key);
          received.push({
            headers,
            body: Buffer.from(m.data),
            brokerId: m.header.get("Nats-Msg-Id"),
          });
        }
      } catch {
        // restarting: read again next time
      }
      return received;
    },
    ...ownServerControls(server, proxy, () => nc.close()),
  };
}

/**
 * Redis Streams: a throwaway server with an append-only file; reads stream "hookinbox:std".
 *
 * @example
 * ```ts
 * const bus = await redisHarness();
 * ```
 */
export async function redisHarness(key = "hookinbox:std"): Promise<BusHarness> {
  const server: OwnServer = await startRedisServer();
  const client = createClient({
    url: server.url,
    socket: { reconnectStrategy: () => 50 },
  }).withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
  client.on("error", () => undefined);
  await client.connect();
  const proxy = await startTcpProxy({ host: "127.0.0.1", port: server.port });
  const received: Received[] = [];
  let last = "0-0";
  return {
    type: "redis",
    proxy,
    destination: (more = {}, viaProxy = false) => ({
      type: "redis",
      url: `redis://127.0.0.1:${viaProxy ? proxy.port : server.port}`,
      ...more,
    }),
    async read() {
      try {
        const entries = (await client.xRange(key, `(${last}`, "+")) ?? [];
        for (const entry of entries) {
          const fields = entry.message as unknown as Record<string, Buffer>;
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(fields)) if (k !== "body") headers[k] = v.toString();
          received.push({ headers, body: fields.body!, brokerId: String(entry.id) });
          last = String(entry.id);
        }
      } catch {
        // restarting: read again next time
      }
      return received;
    },
    ...ownServerControls(server, proxy, async () => client.destroy()),
  };
}

/**
 * Distinct `webhook-id`s among messages.
 *
 * @example
 * ```ts
 * distinctIds(await bus.read()); // 1000
 * ```
 */
export const distinctIds = (messages: readonly Received[]) =>
  new Set(messages.map((m) => m.headers["webhook-id"])).size;
