import { hookinboxError } from "../../errors.ts";

/**
 * Imports a broker's client package on first use, so an inbox with HTTP destinations only needs
 * none of them (they are optional peer dependencies). A missing package is a config error that
 * says what to install.
 *
 * @example
 * ```ts
 * const amqp = await importBrokerClient<typeof import("amqplib")>("amqplib");
 * ```
 */
export async function importBrokerClient<T>(name: "amqplib" | "nats" | "redis"): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_MODULE_NOT_FOUND")
      throw hookinboxError(
        "HOOKINBOX_CONFIG_INVALID",
        `a ${name === "amqplib" ? "amqp" : name} destination needs the "${name}" package: npm install ${name}`,
      );
    throw error;
  }
}
