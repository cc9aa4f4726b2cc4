import type { BrokerDriver } from "./connection.ts";
import { importBrokerClient } from "./import-client.ts";
import { BusFailure, type BusMessage } from "./types.ts";

/** The part of a node-redis client used here (its generic types are too deep to pass around). */
interface RedisClient {
  readonly isOpen: boolean;
  on(event: "error", listener: (error: Error) => void): unknown;
  on(event: "end", listener: () => void): unknown;
  connect(): Promise<unknown>;
  xAdd(
    key: string,
    id: string,
    fields: Record<string, string | Buffer>,
    options?: {
      TRIM: { strategy: "MAXLEN"; strategyModifier: "~" | "="; threshold: number };
    },
  ): Promise<string>;
  close(): Promise<unknown>;
  destroy(): void;
}

/**
 * Redis Streams over the `redis` package: one client that does not reconnect or queue commands
 * by itself (the next publish opens a new one); each message is an `XADD <stream> * …` of the
 * hookinbox headers as fields and the body bytes as the `body` field, trimmed by `MAXLEN`
 * (`~` when approximate) when set, and done on the reply (the entry id). An error reply is a
 * `publish` failure.
 *
 * @example
 * ```ts
 * const publisher = sharedConnectionPublisher(url, redisDriver(url, { count: 100000, approximate: true }), logger, "bus");
 * ```
 */
export function redisDriver(
  url: string,
  maxLen: { readonly count: number; readonly approximate: boolean } | null,
): BrokerDriver<RedisClient> {
  return {
    async open(lost) {
      const redis = await importBrokerClient<typeof import("redis")>("redis");
      const client = redis.createClient({
        url,
        disableOfflineQueue: true,
        socket: { reconnectStrategy: false, connectTimeout: 5000 },
      }) as unknown as RedisClient;
      client.on("error", (error) => lost(error));
      client.on("end", () => lost(undefined));
      try {
        await client.connect();
      } catch (error) {
        client.destroy();
        throw error;
      }
      return client;
    },
    async send(client, message: BusMessage) {
      const fields: Record<string, string | Buffer> = { ...message.headers };
      fields.body = Buffer.from(
        message.body.buffer,
        message.body.byteOffset,
        message.body.byteLength,
      );
      const trim = maxLen
        ? {
            TRIM: {
              strategy: "MAXLEN" as const,
              strategyModifier: maxLen.approximate ? ("~" as const) : ("=" as const),
              threshold: maxLen.count,
            },
          }
        : undefined;
      try {
        return await client.xAdd(message.address, "*", fields, trim);
      } catch (error) {
        const reply = (error as Error).constructor?.name === "ErrorReply";
        throw new BusFailure(reply ? "publish" : "reset", (error as Error).message);
      }
    },
    async close(client) {
      if (client.isOpen) await client.close().catch(() => client.destroy());
      else client.destroy();
    },
  };
}
