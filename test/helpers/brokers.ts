// Brokers for the queue-destination tests: the machine's RabbitMQ (restarted with rabbitmqctl
// stop_app/start_app), and throwaway NATS (JetStream) and Redis servers started from the
// machine's binaries on free ports in temp dirs, restartable with their data kept. A broker that
// cannot be reached fails the test with one line naming the missing service.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { connect } from "node:net";
import { promisify } from "node:util";
import { freePort } from "./free-port.ts";
import { until } from "./processing.ts";
import { tempDir } from "./temp.ts";

const run = promisify(execFile);

/**
 * Resolves when something accepts TCP connections on 127.0.0.1:`port`, else false.
 *
 * @example
 * ```ts
 * await listening(5672); // true while RabbitMQ is up
 * ```
 */
export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * Throws one line naming the service when nothing listens on its port.
 *
 * @example
 * ```ts
 * await requireService("RabbitMQ", 5672, "rabbitmq-server -detached");
 * ```
 */
export async function requireService(name: string, port: number, start: string): Promise<void> {
  if (!(await listening(port)))
    throw new Error(`${name} is not reachable on 127.0.0.1:${port} (start it: ${start})`);
}

/** Throws one line when a broker binary is missing. */
async function requireBinary(path: string, name: string): Promise<void> {
  try {
    await run(path, ["--version"]);
  } catch {
    throw new Error(`${name} is missing: ${path} does not run (install the Debian package)`);
  }
}

/** A broker server this test started: its URL, a restart keeping its data, and a stop. */
export interface OwnServer {
  readonly url: string;
  readonly port: number;
  /** Stops the server gracefully (its data flushed) and starts it again on the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
  /** Starts it again after `stop`. */
  start(): Promise<void>;
  /** Stops it and removes its data. */
  dispose(): Promise<void>;
}

async function ownServer(
  scheme: string,
  binary: string,
  name: string,
  args: (port: number, dir: string) => string[],
  portOverride?: number,
): Promise<OwnServer> {
  await requireBinary(binary, name);
  const tmp = tempDir(`hookinbox-${scheme}-`);
  const port = portOverride ?? (await freePort());
  let child: ChildProcess | null = null;
  const start = async () => {
    const started = spawn(binary, args(port, tmp.dir), { stdio: "ignore" });
    child = started;
    await until(
      async () => (await listening(port)) || started.exitCode !== null,
      15_000,
      `${name} on port ${port}`,
    );
    if (started.exitCode !== null) throw new Error(`${name} exited at start (${started.exitCode})`);
  };
  const stop = async () => {
    const current = child;
    child = null;
    if (!current || current.exitCode !== null) return;
    const exited = new Promise((resolve) => current.once("exit", resolve));
    current.kill("SIGTERM");
    await exited;
  };
  await start();
  return {
    url: `${scheme}://127.0.0.1:${port}`,
    port,
    start,
    stop: async () => {
      await stop();
    },
    async restart() {
      await stop();
      await start();
    },
    async dispose() {
      await stop();
      tmp.cleanup();
    },
  };
}

/**
 * A JetStream-enabled nats-server of the machine's binary on a free port, storing in a temp dir.
 *
 * @example
 * ```ts
 * const nats = await startNatsServer();
 * await nats.restart();
 * ```
 */
export function startNatsServer(port?: number): Promise<OwnServer> {
  return ownServer(
    "nats",
    "/usr/sbin/nats-server",
    "nats-server",
    (p, dir) => ["-a", "127.0.0.1", "-p", String(p), "-js", "-sd", dir],
    port,
  );
}

/**
 * A redis-server of the machine's binary on a free port with an append-only file in a temp dir
 * (fsync every second, Redis's default; a graceful restart flushes it), so a stream survives a
 * restart.
 *
 * @example
 * ```ts
 * const redis = await startRedisServer();
 * ```
 */
export function startRedisServer(port?: number): Promise<OwnServer> {
  return ownServer(
    "redis",
    "/usr/bin/redis-server",
    "redis-server",
    (p, dir) => [
      "--port",
      String(p),
      "--bind",
      "127.0.0.1",
      "--appendonly",
      "yes",
      "--save",
      "",
      "--dir",
      dir,
    ],
    port,
  );
}

/** The machine's RabbitMQ (guest/guest). */
export const rabbitUrl = "amqp://guest:guest@127.0.0.1:5672";

/**
 * Declares a unique durable topic exchange and a durable queue of the same name bound to "#" on
 * the machine's RabbitMQ; returns the name and the open channel (its owner closes it).
 *
 * @example
 * ```ts
 * const { name, channel, model } = await declareRabbitQueue("hookinbox-test");
 * ```
 */
export async function declareRabbitQueue(prefix: string) {
  const { connect } = await import("amqplib");
  const name = `${prefix}-${randomUUID()}`;
  const model = await connect(rabbitUrl);
  const channel = await model.createChannel();
  await channel.assertExchange(name, "topic", { durable: true });
  await channel.assertQueue(name, { durable: true });
  await channel.bindQueue(name, name, "#");
  return { name, model, channel };
}

/**
 * Fails with one line when the machine's RabbitMQ is not up.
 *
 * @example
 * ```ts
 * await requireRabbit();
 * ```
 */
export function requireRabbit(): Promise<void> {
  return requireService("RabbitMQ", 5672, "rabbitmq-server -detached");
}

/**
 * Restarts the machine's RabbitMQ application (`rabbitmqctl stop_app`, then `start_app`): every
 * connection drops; durable queues and persistent messages stay. Returns the milliseconds taken.
 *
 * @example
 * ```ts
 * const ms = await restartRabbit();
 * ```
 */
export async function restartRabbit(): Promise<number> {
  const started = Date.now();
  await run("rabbitmqctl", ["stop_app"]);
  try {
    await run("rabbitmqctl", ["start_app"]);
  } finally {
    await until(() => listening(5672), 60_000, "RabbitMQ back on 5672");
  }
  return Date.now() - started;
}
