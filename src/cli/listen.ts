import type { Command } from "commander";
import { parseDuration } from "../config/units.ts";
import { hookinboxError } from "../errors.ts";
import { standardWebhooksKey } from "../providers/standard-webhooks.ts";
import type { CommandHost } from "./command-host.ts";
import type { CliContext } from "./context.ts";
import {
  apiUrl,
  followEvents,
  type GatewayAccess,
  gatewayError,
  type ListenedEvent,
  unreachable,
} from "./listen-follow.ts";
import { type ListenSigning, type LocalResult, postLocal } from "./listen-forward.ts";
import { escapeControl, jsonForTerminal } from "./terminal.ts";

/** `hookinbox listen`'s options as commander hands them over. */
export interface ListenOptions {
  readonly gateway?: string;
  readonly forwardTo?: string;
  readonly token?: string;
  readonly secret?: string;
  readonly providerHeaders?: boolean;
  readonly source?: string;
  readonly type?: string;
  readonly since?: string;
  readonly replay?: string;
  readonly json?: boolean;
}

const usage = (message: string) => hookinboxError("HOOKINBOX_USAGE", message);

function httpUrl(value: string | undefined, flag: string): string {
  if (value === undefined) throw usage(`${flag} <url> is required (see hookinbox listen --help)`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw usage(`${flag} must be an http(s) URL, got "${value}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw usage(`${flag} must be an http(s) URL, got "${value}"`);
  return url.href;
}

/** How events are signed for the local app, from --secret or --provider-headers (exactly one). */
function signingOf(options: ListenOptions): ListenSigning {
  if (options.providerHeaders) {
    if (options.secret !== undefined)
      throw usage("--provider-headers sends the provider's own signature; drop --secret");
    return { kind: "provider" };
  }
  if (options.secret === undefined)
    throw usage(
      "pass --secret whsec_… (the app verifies hookinbox's Standard Webhooks signature) or --provider-headers (the app verifies the provider's)",
    );
  if (!standardWebhooksKey(options.secret))
    throw usage("--secret must be a Standard Webhooks secret (whsec_ and base64)");
  return {
    kind: "gateway",
    secret: { index: 0, value: options.secret, notBefore: null, notAfter: null },
  };
}

/** One line per event: time source type id → status latency (or its JSON). */
function eventLine(event: ListenedEvent, result: LocalResult, json: boolean): string {
  const latencyMs = Math.round(result.latencyMs);
  if (json)
    return `${jsonForTerminal({
      time: new Date().toISOString(),
      id: event.id,
      source: event.source,
      type: event.type,
      receivedAt: event.receivedAt,
      status: result.status,
      latencyMs,
      error: result.error,
    })}\n`;
  const time = new Date().toISOString().slice(11, 19);
  const outcome = result.status === null ? `error ${result.error}` : String(result.status);
  return `${time}  ${escapeControl(event.source)}  ${escapeControl(event.type ?? "-")}  ${event.id}  → ${outcome}  ${latencyMs} ms\n`;
}

/** `--replay <id>`: one stored event, read with `GET /api/events/{id}`, sent once. */
async function replayOne(
  ctx: CliContext,
  access: GatewayAccess,
  id: string,
  to: string,
  signing: ListenSigning,
  json: boolean,
): Promise<number> {
  let response: Response;
  try {
    response = await fetch(apiUrl(access, `/api/events/${encodeURIComponent(id)}`), {
      headers: { authorization: `Bearer ${access.token}` },
    });
  } catch (error) {
    throw unreachable(access.gateway, error);
  }
  if (!response.ok) throw await gatewayError(response);
  const stored = (await response.json()) as Omit<ListenedEvent, "body"> & {
    body: { base64: string };
  };
  const event: ListenedEvent = { ...stored, body: stored.body.base64 };
  const result = await postLocal(to, event, signing, true);
  ctx.stdout.write(eventLine(event, result, json));
  return result.status !== null && result.status >= 200 && result.status < 300 ? 0 : 1;
}

/**
 * `hookinbox listen --gateway URL --forward-to URL (--secret whsec_… | --provider-headers)
 * [--source S] [--type T] [--since 10m] [--replay ID] [--token T] [--json]`: follows a running
 * gateway's event stream and sends each event to a local URL, one at a time in arrival order,
 * printing a line per event. Stops on SIGINT/SIGTERM (or `signal`). It only reads the gateway.
 *
 * @example
 * ```ts
 * await listenCommand(ctx, { gateway: "https://hooks.example.com", forwardTo: "http://localhost:3000/webhooks", providerHeaders: true });
 * ```
 */
export async function listenCommand(
  ctx: CliContext,
  options: ListenOptions,
  signal?: AbortSignal,
): Promise<number> {
  const gateway = httpUrl(options.gateway, "--gateway");
  const to = httpUrl(options.forwardTo, "--forward-to");
  const token = options.token ?? ctx.env.HOOKINBOX_ADMIN_TOKEN;
  if (!token)
    throw usage("pass --token or set HOOKINBOX_ADMIN_TOKEN (the read-only token will do)");
  const signing = signingOf(options);
  const json = options.json === true;
  const access = { gateway, token };
  if (options.replay !== undefined)
    return replayOne(ctx, access, options.replay, to, signing, json);
  if (options.since !== undefined && parseDuration(options.since) === undefined)
    throw usage(`--since must be a duration such as 10m or 2h, got "${options.since}"`);
  const query = new URLSearchParams();
  if (options.source !== undefined) query.set("source", options.source);
  if (options.type !== undefined) query.set("type", options.type);
  if (options.since !== undefined) query.set("since", options.since);

  const stop = new AbortController();
  const onSignal = () => stop.abort();
  signal?.addEventListener("abort", onSignal);
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  // The stream may repeat an event after a cut in rare cases: each id is sent once.
  const recent = new Set<string>();
  try {
    await followEvents(
      access,
      query,
      {
        onConnected: (resumed) =>
          ctx.stderr.write(
            `hookinbox listen: ${resumed ? "resumed" : "connected to"} ${gateway}; forwarding to ${to}\n`,
          ),
        onRetry: (reason, delayMs) =>
          ctx.stderr.write(`hookinbox listen: ${reason}; retrying in ${delayMs} ms\n`),
        async onEvent(event) {
          if (recent.has(event.id)) return;
          recent.add(event.id);
          if (recent.size > 10_000) recent.delete(recent.values().next().value as string);
          const result = await postLocal(to, event, signing, false);
          ctx.stdout.write(eventLine(event, result, json));
        },
      },
      stop.signal,
    );
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    signal?.removeEventListener("abort", onSignal);
  }
  return 0;
}

/**
 * Registers `hookinbox listen`.
 *
 * @example
 * ```ts
 * registerListen(program, host);
 * ```
 */
export function registerListen(program: Command, host: CommandHost): void {
  program
    .command("listen")
    .description(
      "follow a running gateway's events and send each to a local URL (changes nothing on the gateway)",
    )
    .option("--gateway <url>", "the gateway, e.g. https://hooks.example.com")
    .option("--forward-to <url>", "where to POST each event, e.g. http://localhost:3000/webhooks")
    .option(
      "--token <token>",
      "an admin token, read-only is enough (default HOOKINBOX_ADMIN_TOKEN)",
    )
    .option("--secret <whsec>", "sign as the gateway signs destinations (Standard Webhooks)")
    .option("--provider-headers", "send the provider's original headers and body unchanged")
    .option("--source <name>", "only events of this source")
    .option("--type <type>", "only events of this type")
    .option("--since <duration>", "first re-send the stored events of this long ago, e.g. 10m")
    .option("--replay <eventId>", "send one stored event and exit")
    .option("--json", "print one JSON object per event")
    .action(async (options: ListenOptions) => host.exit(await listenCommand(host.ctx, options)));
}
