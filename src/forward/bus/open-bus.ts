import type { Logger } from "../../log.ts";
import type { ResolvedDestination } from "../resolve-destinations.ts";
import { amqpDriver } from "./amqp.ts";
import { type BrokerDriver, sharedConnectionPublisher } from "./connection.ts";
import { natsDriver } from "./nats.ts";
import { redisDriver } from "./redis.ts";
import type { BusPublisher } from "./types.ts";

/**
 * One publisher per queue destination, for every worker of the process to share; none connects
 * before its first publish. Close them (`closeBusPublishers`) once the workers have stopped.
 *
 * @example
 * ```ts
 * const publishers = openBusPublishers(config.destinations, logger);
 * publishers.get("bus")?.publish(message, 5000, signal);
 * ```
 */
export function openBusPublishers(
  destinations: ReadonlyMap<string, ResolvedDestination>,
  logger: Logger,
): Map<string, BusPublisher> {
  const publishers = new Map<string, BusPublisher>();
  for (const { name, bus } of destinations.values()) {
    if (!bus) continue;
    const open = <C>(driver: BrokerDriver<C>) =>
      sharedConnectionPublisher(bus.url, driver, logger, name);
    publishers.set(
      name,
      bus.type === "amqp"
        ? open(amqpDriver(bus.url, bus.exchange))
        : bus.type === "nats"
          ? open(natsDriver(bus.url))
          : open(redisDriver(bus.url, bus.maxLen)),
    );
  }
  return publishers;
}

/**
 * Closes every publisher's connection (errors are ignored: the process is stopping).
 *
 * @example
 * ```ts
 * await closeBusPublishers(publishers);
 * ```
 */
export async function closeBusPublishers(
  publishers: ReadonlyMap<string, BusPublisher>,
): Promise<void> {
  await Promise.all([...publishers.values()].map((p) => p.close().catch(() => undefined)));
}
