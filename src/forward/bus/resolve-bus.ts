import type { HookinboxConfig } from "../../config/schema.ts";
import { hookinboxError } from "../../errors.ts";
import type { BusSettings } from "./types.ts";

type DestinationInput = NonNullable<HookinboxConfig["destinations"]>[string];
/** A queue destination as configured. */
export type BusInput = Extract<DestinationInput, { type: "amqp" | "nats" | "redis" }>;

/**
 * True for a queue destination (`type` amqp, nats or redis); false for HTTP.
 *
 * @example
 * ```ts
 * isBusInput({ type: "nats", url: "nats://127.0.0.1:4222" }); // true
 * ```
 */
export function isBusInput(input: DestinationInput): input is BusInput {
  return input.type === "amqp" || input.type === "nats" || input.type === "redis";
}

const schemes: Record<BusSettings["type"], readonly string[]> = {
  amqp: ["amqp:", "amqps:"],
  nats: ["nats:", "tls:"],
  redis: ["redis:", "rediss:"],
};

/**
 * A queue destination's broker settings: its URL (written out or read from `{ env }`, checked
 * for the broker's scheme) and its name templates with their defaults: routing key
 * "{source}.{type}", subject "hookinbox.{source}.{type}", stream "hookinbox:{source}", and Redis
 * `maxLen` approximate unless said otherwise. Errors name the key and variable, never the URL.
 *
 * @example
 * ```ts
 * resolveBus("bus", { type: "redis", url: { env: "REDIS_URL" }, maxLen: { count: 100000 } }, process.env);
 * // { type: "redis", url: "redis://…", stream: "hookinbox:{source}", maxLen: { count: 100000, approximate: true } }
 * ```
 */
export function resolveBus(
  name: string,
  input: BusInput,
  env: Record<string, string | undefined>,
): BusSettings {
  const url = busUrl(name, input, env);
  if (input.type === "amqp")
    return {
      type: "amqp",
      url,
      exchange: input.exchange,
      routingKey: input.routingKey ?? "{source}.{type}",
    };
  if (input.type === "nats")
    return { type: "nats", url, subject: input.subject ?? "hookinbox.{source}.{type}" };
  return {
    type: "redis",
    url,
    stream: input.stream ?? "hookinbox:{source}",
    maxLen: input.maxLen
      ? { count: input.maxLen.count, approximate: input.maxLen.approximate ?? true }
      : null,
  };
}

function busUrl(name: string, input: BusInput, env: Record<string, string | undefined>): string {
  const where = `destinations.${name}.url`;
  let url: string;
  if (typeof input.url === "string") url = input.url;
  else {
    const fromEnv = env[input.url.env];
    if (fromEnv === undefined || fromEnv === "")
      throw hookinboxError(
        "HOOKINBOX_SECRET_ENV_MISSING",
        `${where} reads environment variable ${input.url.env}, which is not set; export it or change the config`,
      );
    url = fromEnv;
  }
  const allowed = schemes[input.type];
  if (!URL.canParse(url) || !allowed.includes(new URL(url).protocol))
    throw hookinboxError(
      "HOOKINBOX_CONFIG_INVALID",
      `\n  - ${where}: expected a URL starting with ${allowed.map((s) => `${s}//`).join(" or ")} (type "${input.type}")`,
    );
  return url;
}
