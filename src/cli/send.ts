import { parseArgs } from "node:util";
import { resolveConfig } from "../config/index.ts";
import { hookinboxError } from "../errors.ts";
import { type DeliveryResult, deliver, isSuccess, repeat } from "../testing/deliver.ts";
import { type CliContext, loadRawConfig } from "./context.ts";
import {
  integerOption,
  type SendValues,
  sendSampleCommand,
  sendSampleOptions,
} from "./send-sample.ts";
import { signTestEvent } from "./sign-test-event.ts";

/** Options only `hookinbox send <provider> --to URL` can honour: a configured source signs itself. */
const toOnly = ["secret", "private-key", "data", "replay-of"] as const;

/**
 * `hookinbox send <source> [--url http://127.0.0.1:8080] [--type demo.ping] [--id ID]
 * [--times N [--distinct]] [--parallel K] [--delay MS] [--timeout MS] [--json]`: signs a test
 * event with the source's first secret and posts it, printing the status and response of each
 * send. `--times N` posts the same signed event N times (the first is stored, the others answer
 * `"duplicate": true`); with `--distinct`, N different events. `--parallel K` sends K at once.
 * `--json` prints one JSON object: the sends with their status, time and parsed answer.
 * With `--to URL`, the first argument is a provider instead and any receiver is the target
 * (see {@link sendSampleCommand}). An option the mode cannot honour is refused (HOOKINBOX_USAGE).
 *
 * @example
 * ```ts
 * await sendCommand(ctx, ["demo", "--url", "http://127.0.0.1:8080", "--times", "3"]);
 * ```
 */
export async function sendCommand(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: sendSampleOptions,
  });
  const sourceName = positionals[0];
  if (!sourceName)
    throw hookinboxError(
      "HOOKINBOX_USAGE",
      "`hookinbox send <source>` needs a source name (or `hookinbox send <provider> --to URL`)",
    );
  if (positionals.length > 1)
    throw hookinboxError(
      "HOOKINBOX_USAGE",
      `\`hookinbox send\` takes one source (or provider), got ${positionals.length}: ${positionals.join(" ")}`,
    );
  if (values.to !== undefined) return sendSampleCommand(ctx, sourceName, values);
  const refused = toOnly.find((name) => values[name] !== undefined);
  if (refused !== undefined)
    throw hookinboxError(
      "HOOKINBOX_USAGE",
      `--${refused} is for \`hookinbox send <provider> --to URL\`; \`hookinbox send <source>\` signs with the source's configured secret`,
    );
  if (values.distinct && values.id !== undefined)
    throw hookinboxError(
      "HOOKINBOX_USAGE",
      "--distinct sends a new event id each time; --id names one: pass one of them",
    );
  return sendToSource(ctx, sourceName, values);
}

/** One send's line of `--json`: its event id, status, time and the gateway's parsed answer. */
interface SourceSend {
  eventId: string;
  status: number;
  ms: number;
  response: unknown;
  error?: string;
}

async function sendToSource(
  ctx: CliContext,
  sourceName: string,
  values: SendValues,
): Promise<number> {
  const times = integerOption("times", values.times, 1, 100_000, 1);
  const parallel = integerOption("parallel", values.parallel, 1, 1_000, 1);
  const delayMs = integerOption("delay", values.delay, 0, 3_600_000, 0);
  const timeoutMs = integerOption("timeout", values.timeout, 1, 600_000, 30_000);
  const raw = await loadRawConfig(ctx, values.config);
  const config = resolveConfig(raw.config, ctx.env);
  const source = config.sources.get(sourceName);
  if (!source) throw hookinboxError("HOOKINBOX_SOURCE_NOT_FOUND", sourceName);
  const base = values.url ?? `http://${config.http.host}:${config.http.port}`;
  const url = `${base}/webhooks/${encodeURIComponent(sourceName)}`;
  const type = values.type ?? (source.provider === "github" ? "ping" : "demo.ping");
  const sign = () => signTestEvent(source, Date.now(), type, values.id);
  // The same bytes each time (a true duplicate), unless --distinct asks for new events.
  const same = values.distinct ? null : sign();
  const json = values.json === true;
  const sends = await repeat(
    times,
    parallel,
    delayMs,
    async () => {
      const test = same ?? sign();
      const result = await deliver(
        { url, headers: test.headers, body: test.body, eventId: test.id, type },
        { timeoutMs },
      );
      return { id: test.id, result };
    },
    json
      ? undefined
      : (index, { result }) => {
          const answer = result.error ?? result.body;
          const prefix = times > 1 ? `send ${index + 1}/${times}  ` : "";
          ctx.stdout.write(`${prefix}${result.status === 0 ? "---" : result.status} ${answer}\n`);
        },
  );
  const ok = sends.every((s) => isSuccess(s.result.status));
  if (json) {
    const lines = sends.map((s) => sourceSend(s.id, s.result));
    ctx.stdout.write(`${JSON.stringify({ source: sourceName, type, url, sends: lines, ok })}\n`);
  }
  return ok ? 0 : 1;
}

function sourceSend(eventId: string, result: DeliveryResult): SourceSend {
  let response: unknown = result.body;
  try {
    response = JSON.parse(result.body);
  } catch {
    // not JSON: kept as text
  }
  return {
    eventId,
    status: result.status,
    ms: Math.round(result.ms * 10) / 10,
    response,
    ...(result.error ? { error: result.error } : {}),
  };
}
