import type { PostResult } from "../http-client.ts";

/** Which broker a queue destination publishes to. */
export type BusType = "amqp" | "nats" | "redis";

/** A queue destination's broker settings, resolved at boot (the URL may hold a password: never log it). */
export type BusSettings =
  | {
      readonly type: "amqp";
      readonly url: string;
      readonly exchange: string;
      readonly routingKey: string;
    }
  | { readonly type: "nats"; readonly url: string; readonly subject: string }
  | {
      readonly type: "redis";
      readonly url: string;
      readonly stream: string;
      readonly maxLen: { readonly count: number; readonly approximate: boolean } | null;
    };

/** One message as every broker gets it: the name it goes to, its headers (fields) and the raw body. */
export interface BusMessage {
  /** The exchange's routing key, the NATS subject or the Redis stream key (template expanded). */
  readonly address: string;
  /** `webhook-id`, `hookinbox-attempt`, `-replay`, `-event-id`, `-delivery-id`, `-source`, `-type`, `content-type`. */
  readonly headers: Readonly<Record<string, string>>;
  /** The id a broker deduplicates on: the stable delivery id, or for a replay, its own. */
  readonly dedupId: string;
  /** The body exactly as stored. */
  readonly body: Uint8Array;
}

/**
 * Publishes to one broker over one lazily opened connection that is opened again after the broker
 * drops it. `publish` never throws: its result is what an HTTP POST's would be with no response
 * (`status` null); `errorClass` null means the broker confirmed, and `body` then holds its receipt
 * (the stream sequence or entry id); `connect` or `timeout` means unreachable, `reset` a channel
 * or connection closed under the publish, `publish` a nack or error reply.
 */
export interface BusPublisher {
  publish(message: BusMessage, timeoutMs: number, signal: AbortSignal): Promise<PostResult>;
  close(): Promise<void>;
}

/** A failure a broker module throws, with the error class its result records. */
export class BusFailure extends Error {
  constructor(
    readonly errorClass: "connect" | "reset" | "publish",
    message: string,
  ) {
    super(message);
  }
}
