import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { hookinboxError } from "../errors.ts";
import { type DeliveryResult, deliver, isSuccess, percentile, repeat } from "../testing/deliver.ts";
import { providerSamples, sampleFor } from "../testing/samples/index.ts";
import type { SampleHandshake, SampleRequest } from "../testing/samples/types.ts";
import type { CliContext } from "./context.ts";
import { printable } from "./printable.ts";
import { jsonForTerminal } from "./terminal.ts";

/** The options of `hookinbox send <provider> --to URL`, as parseArgs declares them. */
export const sendSampleOptions = {
  config: { type: "string", short: "c" },
  url: { type: "string" },
  to: { type: "string" },
  secret: { type: "string" },
  "private-key": { type: "string" },
  type: { type: "string" },
  id: { type: "string" },
  data: { type: "string" },
  times: { type: "string" },
  parallel: { type: "string" },
  delay: { type: "string" },
  "replay-of": { type: "string" },
  timeout: { type: "string" },
  json: { type: "boolean" },
  distinct: { type: "boolean" },
} as const;

/** Parsed `hookinbox send` options. */
export type SendValues = {
  [K in keyof typeof sendSampleOptions]?: (typeof sendSampleOptions)[K]["type"] extends "boolean"
    ? boolean
    : string;
};

/**
 * An integer option from `min` to `max`, `fallback` when absent; a HOOKINBOX_USAGE error otherwise.
 *
 * @example
 * ```ts
 * integerOption("times", "3", 1, 100_000, 1); // 3
 * ```
 */
export function integerOption(
  name: string,
  value: string | undefined,
  min: number,
  max: number,
  fallback: number,
): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) {
    throw hookinboxError(
      "HOOKINBOX_USAGE",
      `--${name} takes an integer from ${min} to ${max} (got "${value}")`,
    );
  }
  return n;
}

function targetUrl(value: string | undefined): string {
  if (value === undefined) {
    throw hookinboxError(
      "HOOKINBOX_USAGE",
      "`hookinbox send <provider>` needs --to URL (the receiver's full URL)",
    );
  }
  try {
    const url = new URL(value);
    if (url.protocol === "http:" || url.protocol === "https:") return url.toString();
  } catch {}
  throw hookinboxError("HOOKINBOX_USAGE", `--to takes an http(s) URL (got "${value}")`);
}

/**
 * The secret to sign with: `--secret`, else the `HOOKINBOX_SECRET` environment variable (which
 * keeps it out of the process list and shell history).
 *
 * @example
 * ```ts
 * signingSecret(ctx, values.secret); // "whsec_…"
 * ```
 */
export function signingSecret(ctx: CliContext, flag: string | undefined): string {
  const secret = flag ?? ctx.env.HOOKINBOX_SECRET;
  if (secret === undefined || secret === "") {
    throw hookinboxError(
      "HOOKINBOX_USAGE",
      "pass --secret S or set HOOKINBOX_SECRET to the secret the provider signs with",
    );
  }
  return secret;
}

/**
 * The text of `--private-key FILE` (a PEM private key, followed by its certificate for SNS and
 * PayPal), for the providers that sign with a private key; `undefined` without the option.
 *
 * @example
 * ```ts
 * privateKeyFile(ctx, "./sns-test-key.pem"); // "-----BEGIN PRIVATE KEY-----…"
 * ```
 */
export function privateKeyFile(ctx: CliContext, file: string | undefined): string | undefined {
  if (file === undefined) return undefined;
  try {
    return readFileSync(resolve(ctx.cwd, file), "utf8");
  } catch (error) {
    throw hookinboxError(
      "HOOKINBOX_USAGE",
      `--private-key ${file}: ${(error as NodeJS.ErrnoException).code ?? "unreadable"}`,
    );
  }
}

/**
 * Resolves a provider name to its sample or fails with the list of known providers.
 *
 * @example
 * ```ts
 * requireSample("stripe").defaultType; // "customer.subscription.updated"
 * ```
 */
export function requireSample(provider: string) {
  const sample = sampleFor(provider);
  if (!sample) {
    throw hookinboxError(
      "HOOKINBOX_USAGE",
      `no sample for provider "${provider}"; known: ${[...providerSamples.keys()].join(", ")}`,
    );
  }
  return sample;
}

function resultLine(index: number, count: number, result: DeliveryResult): string {
  const status = result.status === 0 ? "---" : String(result.status);
  const answer = result.error ?? result.body;
  return `send ${index + 1}/${count}  ${status}  ${result.ms.toFixed(1)} ms  ${printable(answer, 100)}\n`;
}

/**
 * `hookinbox send <provider> --to URL (--secret S | --private-key FILE) [--type T] [--id ID] [--data FILE] [--times N]
 * [--parallel N] [--delay MS] [--replay-of ID] [--timeout MS] [--json]`: builds the provider's
 * sample event (or its handshake, when `--type` names it), signs it as the provider does and
 * sends the same bytes N times, P at a time; prints status and time per send. Exit 0 when every
 * send got a 2xx (and a handshake was answered correctly).
 *
 * @example
 * ```ts
 * await sendSampleCommand(ctx, "stripe", values); // values from parseArgs(sendSampleOptions)
 * ```
 */
export async function sendSampleCommand(
  ctx: CliContext,
  provider: string,
  values: SendValues,
): Promise<number> {
  if (values.distinct) {
    throw hookinboxError(
      "HOOKINBOX_USAGE",
      "--distinct is for `hookinbox send <source>`; with --to, --times sends the same event (choose its id with --id)",
    );
  }
  const sample = requireSample(provider);
  const url = targetUrl(values.to);
  const secret = signingSecret(ctx, values.secret ?? privateKeyFile(ctx, values["private-key"]));
  const times = integerOption("times", values.times, 1, 100_000, 1);
  const parallel = integerOption("parallel", values.parallel, 1, 1_000, 1);
  const delayMs = integerOption("delay", values.delay, 0, 3_600_000, 0);
  const timeoutMs = integerOption("timeout", values.timeout, 1, 600_000, 30_000);
  if (values.id !== undefined && values["replay-of"] !== undefined) {
    throw hookinboxError(
      "HOOKINBOX_USAGE",
      "--id and --replay-of both name the event id; pass one",
    );
  }
  let body: string | undefined;
  if (values.data !== undefined) {
    try {
      body = readFileSync(resolve(ctx.cwd, values.data), "utf8");
    } catch (error) {
      throw hookinboxError(
        "HOOKINBOX_USAGE",
        `--data ${values.data}: ${(error as NodeJS.ErrnoException).code ?? "unreadable"}`,
      );
    }
  }
  const input = {
    secret,
    url,
    nowMs: Date.now(),
    id: values["replay-of"] ?? values.id ?? sample.newId(),
    ...(values.type === undefined ? {} : { type: values.type }),
    ...(body === undefined ? {} : { body }),
    redelivery: values["replay-of"] !== undefined,
  };
  let handshake: SampleHandshake | undefined;
  let request: SampleRequest;
  try {
    handshake =
      values.type !== undefined && values.type === sample.handshakeType
        ? sample.handshake?.(input)
        : undefined;
    request = handshake?.request ?? sample.build(input);
  } catch (error) {
    throw hookinboxError(
      "HOOKINBOX_USAGE",
      `cannot build the ${provider} sample: ${(error as Error).message}`,
    );
  }
  const json = values.json === true;
  if (!json) {
    ctx.stdout.write(`${provider} ${request.type} id=${request.eventId ?? "-"} → ${request.url}\n`);
    const receiverSecret = sample.receiverSecret?.(secret);
    if (receiverSecret !== undefined)
      ctx.stdout.write(`receiver verifies with: ${receiverSecret}\n`);
  }
  const results = await repeat(
    times,
    parallel,
    delayMs,
    () => deliver(request, { timeoutMs }),
    json ? undefined : (index, result) => ctx.stdout.write(resultLine(index, times, result)),
  );
  const ok = results.filter((r) => isSuccess(r.status)).length;
  const handshakeOk =
    handshake === undefined || results.every((r) => handshake.accepts(r.status, r.body));
  const times_ = results.map((r) => r.ms);
  if (json) {
    ctx.stdout.write(
      `${jsonForTerminal({
        provider,
        type: request.type,
        eventId: request.eventId ?? null,
        url: request.url,
        sends: results.map((r) => ({
          status: r.status,
          ms: Math.round(r.ms * 10) / 10,
          ...(r.error ? { error: r.error } : {}),
        })),
        ok: ok === times && handshakeOk,
        ...(handshake ? { handshakeAnswered: handshakeOk } : {}),
      })}\n`,
    );
  } else {
    const codes = new Map<string, number>();
    for (const r of results) {
      const key = r.status === 0 ? "no answer" : `${Math.floor(r.status / 100)}xx`;
      codes.set(key, (codes.get(key) ?? 0) + 1);
    }
    const tally = [...codes].map(([key, n]) => `${n} × ${key}`).join(", ");
    ctx.stdout.write(
      `${times} sent: ${tally}; p50 ${percentile(times_, 50).toFixed(1)} ms, p99 ${percentile(times_, 99).toFixed(1)} ms, max ${Math.max(...times_).toFixed(1)} ms\n`,
    );
    if (handshake)
      ctx.stdout.write(
        handshakeOk
          ? "handshake answered correctly\n"
          : "handshake NOT answered as the provider expects\n",
      );
  }
  return ok === times && handshakeOk ? 0 : 1;
}
