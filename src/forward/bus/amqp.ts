import type { ConfirmChannel } from "amqplib";
import type { BrokerDriver } from "./connection.ts";
import { importBrokerClient } from "./import-client.ts";
import { BusFailure, type BusMessage } from "./types.ts";

interface AmqpConnection {
  readonly close: () => Promise<void>;
  readonly channel: ConfirmChannel;
  /** Publishes waiting for their confirm: rejected when the channel closes under them. */
  readonly waiting: Set<(error: Error) => void>;
}

/**
 * RabbitMQ over amqplib: one connection with one confirm channel; each message is published
 * persistent to `exchange` with its routing key, the stable id as `messageId` and the hookinbox
 * headers, and is done when the broker confirms it. A nack is a `publish` failure; a channel or
 * connection that closes under a publish (a missing exchange closes the channel) fails it with
 * the broker's reason, and the next publish opens both again.
 *
 * @example
 * ```ts
 * const publisher = sharedConnectionPublisher(url, amqpDriver(url, "events"), logger, "bus");
 * ```
 */
export function amqpDriver(url: string, exchange: string): BrokerDriver<AmqpConnection> {
  return {
    async open(lost) {
      const amqp = await importBrokerClient<typeof import("amqplib")>("amqplib");
      const model = await amqp.connect(url);
      let reason: Error | undefined;
      const waiting = new Set<(error: Error) => void>();
      const closed = (error?: Error) => {
        reason ??= error;
        const failure = new BusFailure("reset", reason?.message ?? "the channel closed");
        for (const reject of waiting) reject(failure);
        waiting.clear();
        lost(reason);
      };
      model.on("error", (error: Error) => {
        reason ??= error;
      });
      model.on("close", closed);
      try {
        const channel = await model.createConfirmChannel();
        channel.on("error", (error: Error) => {
          reason ??= error;
        });
        channel.on("close", () => closed());
        return { close: () => model.close(), channel, waiting };
      } catch (error) {
        await model.close().catch(() => undefined);
        throw error;
      }
    },
    send({ channel, waiting }, message: BusMessage) {
      return new Promise<string>((resolve, reject) => {
        waiting.add(reject);
        const { "content-type": contentType, ...headers } = message.headers;
        channel.publish(
          exchange,
          message.address,
          Buffer.from(message.body.buffer, message.body.byteOffset, message.body.byteLength),
          {
            persistent: true,
            messageId: message.dedupId,
            headers,
            ...(contentType ? { contentType } : {}),
            timestamp: Math.floor(Date.now() / 1000),
          },
          (error: unknown) => {
            waiting.delete(reject);
            if (error) reject(new BusFailure("publish", "the broker nacked the message"));
            else resolve("confirmed");
          },
        );
      });
    },
    close: ({ close }) => close(),
  };
}
