import { z } from "zod";
import type { AlertNotice, DestinationDisabledAlert, EffectHeldAlert } from "../alerts/types.ts";
import type { Handler } from "../handlers/types.ts";
import { providerDefinitions, type RegisteredProvider } from "../providers/all.ts";
import type { AcceptReadonly } from "../providers/definition.ts";
import type { DeadLetterAlert } from "../store/queue-types.ts";
import { cidr, duration, headerName, publicUrl, secretSchema } from "./source-fields.ts";
import { transformField, transformTimeoutField } from "./transform-fields.ts";
import { parseDuration, parseSize } from "./units.ts";

const size = z.union([z.number(), z.string()]).refine((v) => parseSize(v) !== undefined, {
  message: 'expected a size: bytes or a string like "512kb", "1mb"',
});

export { providerNames } from "../providers/all.ts";
export { secretSchema };

const sourceSchemas = providerDefinitions.map((p) => p.schema) as unknown as [
  RegisteredProvider["schema"],
  ...RegisteredProvider["schema"][],
];

/** One source: `provider` picks the registered provider whose options schema applies. */
export const sourceSchema = z.discriminatedUnion("provider", sourceSchemas);

const fn = <F extends (...args: never[]) => unknown>(what: string) =>
  z.custom<F>((v) => typeof v === "function", { message: `expected a function ${what}` });

/** Retry policy: delays between tries (the last repeats), how many tries in all, and jitter. */
export const retrySchema = z.strictObject({
  schedule: z.array(duration).min(1, "a retry schedule needs at least one delay").optional(),
  maxAttempts: z.number().int().min(1).max(1000).optional(),
  jitter: z.enum(["full", "none"]).optional(),
});

const handlerOptionsSchema = z.strictObject({
  lease: duration.optional(),
  /** An attempt longer than this is aborted and counts as failed (default 5m). */
  timeout: duration.optional(),
  retry: retrySchema.optional(),
  stale: z.enum(["skip", "deliver"]).optional(),
  onDeadLetter: z.enum(["block", "continue"]).optional(),
});

// Typed so that handlers written inline in defineConfig get `event` and `ctx` types.
// biome-ignore lint/suspicious/noExplicitAny: a handler may declare any payload type.
const handlerFn = fn<Handler<any>>("(event, ctx) => …");

/** A handler pattern: "source:type" with `*` wildcards, or "*" for everything. */
export const handlerPattern = z.string().regex(/^(\*|(\*|[a-z0-9][a-z0-9_-]*):[^\s]+)$/i, {
  message:
    'a handler pattern is "source:type" with * wildcards ("stripe:invoice.*", "github:*") or "*"',
});

/** `runbooks`: per event type (handler-pattern keys), what the on-call person reads. */
export const runbooksSchema = z.record(
  handlerPattern,
  z.strictObject({
    owner: z.string().min(1).optional(),
    safeToReprocess: z.boolean().optional(),
    notes: z.string().optional(),
    link: z
      .string()
      .url()
      .refine((v) => /^https?:\/\//.test(v), { message: "expected an http(s) URL" })
      .optional(),
  }),
);

/** A destination name: it names the delivery target, so it never contains ":" or "*". */
export const destinationName = z.string().regex(/^[a-z0-9][a-z0-9_-]*$/i, {
  message: "a destination name may hold letters, digits, '-' and '_'",
});

/** A duration over zero. */
const positiveDuration = duration.refine((v) => (parseDuration(v) ?? 0) > 0, {
  message: "expected a duration over zero",
});

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/** How deliveries to any destination run: flow control, retries, dead letters, the breaker. */
const deliveryFields = {
  timeout: duration.optional(),
  /** Attempts in flight at once, across every process sharing the store. */
  concurrency: z.number().int().min(1).max(1000).optional(),
  /** Attempts started per second (a number), or `{ max, per }`, across every process. */
  rateLimit: z
    .union([
      z.number().int().min(1),
      z.strictObject({ max: z.number().int().min(1), per: duration }),
    ])
    .optional(),
  retry: retrySchema.optional(),
  onDeadLetter: z.enum(["block", "continue"]).optional(),
  /** Reshapes or drops what this destination is sent (after a route's); docs/forwarding.md#transformations. */
  transform: transformField.optional(),
  transformTimeout: transformTimeoutField.optional(),
  /**
   * Opens on a failure rate over a sliding window (with a minimum of calls) or on network
   * failures in a row, sends nothing for `cooldown`, then lets `trials` through; false turns it
   * off. See docs/forwarding.md#circuit-breaker.
   */
  circuitBreaker: z
    .union([
      z.literal(false),
      z
        .strictObject({
          /** Failures over calls in `window` that open the circuit (default 0.85). */
          failureRate: z.number().gt(0).max(1).optional(),
          /** The sliding window the rate is counted over (default 30s). */
          window: positiveDuration.optional(),
          /** Fewer calls than this in the window never open it by rate (default 50). */
          minCalls: z.number().int().min(1).optional(),
          /** Connect, timeout, reset or DNS failures in a row that open it (default 5). */
          downInRow: z.number().int().min(1).optional(),
          /** How long an open circuit sends nothing (default 5s). */
          cooldown: positiveDuration.optional(),
          /** Attempts a half-open circuit lets through, across every process (default 3). */
          trials: z.number().int().min(1).max(100).optional(),
          /** Replaced (it counted 5xx answers too): refused below, naming the new keys. */
          failures: z.custom<never>(() => true).optional(),
        })
        .superRefine((value, ctx) => {
          if (value.failures !== undefined)
            ctx.addIssue({
              code: "custom",
              path: ["failures"],
              message:
                "`failures` was replaced: use `downInRow` (connect, timeout, reset or DNS failures in a row, default 5) and `failureRate`, `window`, `minCalls` (default 0.85 over 30s with at least 50 calls); see docs/forwarding.md#circuit-breaker",
            });
        }),
    ])
    .optional(),
};

/** One destination URL events are forwarded to (see docs/forwarding.md). */
export const httpDestinationSchema = z.strictObject({
  /** HTTP is the default: `type` may be left out. */
  type: z.literal("http").optional(),
  url: publicUrl,
  /** Standard Webhooks secret(s) (`whsec_…`); with several active, every one signs (rotation). */
  secret: z.union([secretSchema, z.array(secretSchema).min(1)]),
  /** Extra headers sent with every request (e.g. an Authorization the app expects). */
  headers: z.record(headerName, z.string()).optional(),
  /** More original request headers to forward, beyond the documented allowlist. */
  forwardHeaders: z.array(headerName).optional(),
  /** Allows loopback, private, link-local, CGNAT and metadata addresses (off by default: SSRF). */
  allowPrivateNetworks: z.boolean().optional(),
  ...deliveryFields,
});

/** A broker URL of one of `schemes`, written out or read from the environment (`{ env }`). */
function brokerUrl(schemes: readonly string[]) {
  const shown = schemes.map((s) => `${s}//`).join(" or ");
  return z.union([
    z.string().refine((v) => URL.canParse(v) && schemes.includes(new URL(v).protocol), {
      message: `expected a URL starting with ${shown}`,
    }),
    z.strictObject({ env: z.string().min(1) }),
  ]);
}

/** A name template over `{source}` and `{type}` (no other braces). */
const busTemplate = z.string().regex(/^([^{}]|\{source\}|\{type\})+$/, {
  message: "expected text with {source} and {type} placeholders only",
});

/** A RabbitMQ destination: persistent messages to an exchange, confirmed by the broker. */
const amqpDestinationSchema = z.strictObject({
  type: z.literal("amqp"),
  url: brokerUrl(["amqp:", "amqps:"]),
  /** An existing exchange ("" for the default exchange, which routes by queue name). */
  exchange: z.string(),
  /** The routing key (default "{source}.{type}"). */
  routingKey: busTemplate.optional(),
  ...deliveryFields,
});

/** A NATS JetStream destination: published to a subject a stream captures, acknowledged by it. */
const natsDestinationSchema = z.strictObject({
  type: z.literal("nats"),
  url: brokerUrl(["nats:", "tls:"]),
  /** The subject (default "hookinbox.{source}.{type}"). */
  subject: busTemplate.optional(),
  ...deliveryFields,
});

/** A Redis Streams destination: XADD to a stream, capped by `maxLen`. */
const redisDestinationSchema = z.strictObject({
  type: z.literal("redis"),
  url: brokerUrl(["redis:", "rediss:"]),
  /** The stream key (default "hookinbox:{source}"). */
  stream: busTemplate.optional(),
  /** Trims the stream to about (`approximate`, the default) or exactly `count` entries. */
  maxLen: z
    .strictObject({ count: z.number().int().min(1), approximate: z.boolean().optional() })
    .optional(),
  ...deliveryFields,
});

/** One destination: an HTTP URL (the default) or a queue (`type` "amqp", "nats" or "redis"). */
export const destinationSchema = z.discriminatedUnion(
  "type",
  [httpDestinationSchema, amqpDestinationSchema, natsDestinationSchema, redisDestinationSchema],
  {
    error: () =>
      'unknown destination type; expected "http" (the default), "amqp", "nats" or "redis"',
  },
);

const jsonPathKey = z.string().regex(/^\$(\.[^.[\]]+|\[\d+\])+$/, {
  message: 'expected a JSON path like "$.data.object.livemode"',
});

/** Where events go: handlers and destinations by name, for a source, types and body values. */
export const routeSchema = z.strictObject({
  from: z.union([z.string(), z.array(z.string()).min(1)]),
  /** Event type patterns with `*` wildcards (default: every type). */
  types: z.array(z.string().min(1)).min(1).optional(),
  /** JSON path → value: every one must be equal in the event body. */
  where: z.record(jsonPathKey, scalar).optional(),
  to: z.union([z.string(), z.array(z.string()).min(1)]),
  /** Reshapes or drops what this route's destinations are sent; docs/forwarding.md#transformations. */
  transform: transformField.optional(),
  transformTimeout: transformTimeoutField.optional(),
});

export const configSchema = z.strictObject({
  /** Named environments (see selectEnvironment); removed before the rest is validated. */
  environments: z.record(z.string(), z.unknown()).optional(),
  store: z.string().min(1).optional(),
  http: z
    .strictObject({
      host: z.string().min(1).optional(),
      port: z.number().int().min(0).max(65535).optional(),
      bodyLimit: size.optional(),
      readTimeout: duration.optional(),
      /** A connection that has no request in progress is closed after this long (default 10s). */
      idleTimeout: duration.optional(),
      /** An idle keep-alive connection is closed after this long (default 65s). */
      keepAliveTimeout: duration.optional(),
      /** The request line and headers must arrive within this (default 20s). */
      headersTimeout: duration.optional(),
      /** The whole request must arrive within this (default readTimeout + 5s). */
      requestTimeout: duration.optional(),
      /** Open connections at most; past it the longest-idle one is closed (default 1000). */
      maxConnections: z.number().int().min(1).optional(),
      /**
       * Open connections one remote address (IPv6: its /64) may hold; false turns the share off
       * (default a tenth of maxConnections). Peers in trustedProxies are exempt.
       */
      maxConnectionsPerAddress: z.union([z.literal(false), z.number().int().min(1)]).optional(),
      /**
       * After `grace`, a body must keep arriving at `bytesPerSecond` over each `window`, else 408
       * HOOKINBOX_BODY_TOO_SLOW (default 240 bytes/s, 5s, 5s); false turns it off.
       */
      minBodyRate: z
        .union([
          z.literal(false),
          z.strictObject({
            bytesPerSecond: z.number().int().min(1).optional(),
            grace: duration.optional(),
            window: duration.optional(),
          }),
        ])
        .optional(),
      /** On shutdown, requests in progress get this long before their connections close (default 10s). */
      drainTimeout: duration.optional(),
      /** The public base URL providers call (Twilio, HubSpot and Square sign it). */
      publicUrl: publicUrl.optional(),
      /**
       * A verified request whose `hookinbox-hops` (times hookinbox forwarded it) is over this gets
       * 508 HOOKINBOX_LOOP_DETECTED and is not stored (default 3; 0 refuses every forwarded one).
       */
      maxHops: z.number().int().min(0).max(100).optional(),
      /** Proxies whose X-Forwarded-For is believed; the client is the last untrusted hop. */
      trustedProxies: z.array(cidr).optional(),
      /** Rejected requests allowed per remote address per window, then 429 without work. */
      rejectLimit: z
        .strictObject({ max: z.number().int().min(1).optional(), window: duration.optional() })
        .optional(),
      /** Rejected receipts older than this are deleted, hourly, in batches (default 7d). */
      rejectedRetention: duration.optional(),
    })
    .optional(),
  admin: z
    .strictObject({
      token: secretSchema.optional(),
      /**
       * A second, read-only token: GET routes and the event stream (`hookinbox listen`); every
       * write answers 403 HOOKINBOX_ADMIN_READ_ONLY. Must differ from `token`.
       */
      readToken: secretSchema.optional(),
      /** Event streams (`GET /api/events/stream`) open at once per process (default 200). */
      maxStreams: z.number().int().min(1).optional(),
      /** Wrong admin tokens allowed per address per window (default 10 per 1m), then 429. */
      authLimit: z
        .strictObject({ max: z.number().int().min(1).optional(), window: duration.optional() })
        .optional(),
    })
    .optional(),
  /**
   * Retention (docs/audit.md#retention), swept hourly by the gateway or worker process and on
   * command (`hookinbox retention run [--dry-run]`); audit leaves always stay, so proofs verify.
   * `payloads`: bodies and headers of finished events older than this are emptied (off unset).
   * `events`: whole finished events older than this are removed (off unset; at least `dedup`).
   * `receipts`: accepted receipts older than this are removed (off unset).
   * `rejected`: rejected receipts (default `http.rejectedRetention`, else 7d).
   * `dedup`: how long a dedup key is kept, so a resend within it is a duplicate (default 35d,
   * over ten times the longest documented provider retry window, 3 days).
   * `sweep`: false stops every process (`hookinbox start` and `inbox.startWorker()`) from
   * sweeping hourly on its own; run `hookinbox retention run` on a schedule instead.
   */
  retention: z
    .strictObject({
      sweep: z.boolean().optional(),
      payloads: duration.optional(),
      events: duration.optional(),
      receipts: duration.optional(),
      rejected: duration.optional(),
      dedup: duration.optional(),
    })
    .optional(),
  /**
   * The tamper-evident log (on by default): every accepted event is a Merkle leaf; heads are
   * signed with `key` (Ed25519; default `HOOKINBOX_AUDIT_KEY`, else a key file made on first
   * start), every `headInterval` when the log grew (default 1m), and sent to `witness`. On
   * PostgreSQL a leaf is in the tree within `maxMergeDelay` of its accept (default 10s, at least
   * 1s): the maximum merge delay, as Certificate Transparency logs have.
   */
  audit: z
    .strictObject({
      enabled: z.boolean().optional(),
      key: z.union([z.string().min(1), z.strictObject({ env: z.string().min(1) })]).optional(),
      headInterval: duration.optional(),
      maxMergeDelay: duration
        .refine((v) => (parseDuration(v) ?? 0) >= 1_000, { message: "must be at least 1s" })
        .optional(),
      witness: z
        .strictObject({
          file: z.string().min(1).optional(),
          url: publicUrl.optional(),
          /** Allows a loopback, private or link-local witness URL (off by default: SSRF). */
          allowPrivateNetworks: z.boolean().optional(),
        })
        .optional(),
    })
    .optional(),
  /**
   * Prometheus metrics. Off the public webhook listener by default: `port` serves `/metrics` on a
   * listener of its own (host default 127.0.0.1); `/api/metrics` serves it to admins anyway.
   */
  metrics: z
    .strictObject({
      enabled: z.boolean().optional(),
      host: z.string().min(1).optional(),
      port: z.number().int().min(0).max(65535).optional(),
    })
    .optional(),
  /**
   * OpenTelemetry traces (docs/operations.md#traces), off by default: `enabled` makes hookinbox
   * start `webhook.receive` and `delivery.attempt` spans on the globally registered provider
   * (register an SDK and exporter first; with none they cost nothing but a no-op call).
   */
  tracing: z.strictObject({ enabled: z.boolean().optional() }).optional(),
  log: z
    .strictObject({
      level: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).optional(),
    })
    .optional(),
  handlers: z
    .record(
      handlerPattern,
      z.union([
        handlerFn,
        z.strictObject({ handler: handlerFn, options: handlerOptionsSchema.optional() }),
      ]),
    )
    .optional(),
  retry: retrySchema.optional(),
  worker: z
    .strictObject({
      enabled: z.boolean().optional(),
      concurrency: z.number().int().min(1).max(1000).optional(),
      lease: duration.optional(),
      pollInterval: duration.optional(),
      shutdownTimeout: duration.optional(),
    })
    .optional(),
  /** What the on-call person reads beside a failure, per event type (handler-pattern keys). */
  runbooks: runbooksSchema.optional(),
  alerts: z
    .strictObject({
      onDeadLetter: fn<(alert: DeadLetterAlert) => unknown>("(alert) => …").optional(),
      onEffectHeld: fn<(alert: EffectHeldAlert) => unknown>("(alert) => …").optional(),
      onDestinationDisabled:
        fn<(alert: DestinationDisabledAlert) => unknown>("(alert) => …").optional(),
      /** The function form of the webhook: every condition, folded per window, from the outbox. */
      onAlert: fn<(alert: AlertNotice) => unknown>("(alert) => …").optional(),
      /** Alerts as Standard Webhooks messages, sent from the store's outbox until 2xx. */
      webhook: z
        .strictObject({
          url: publicUrl,
          secret: secretSchema,
          headers: z.record(z.string(), z.string()).optional(),
          /** Lets the URL reach loopback, private and link-local addresses (default false). */
          allowPrivateNetworks: z.boolean().optional(),
        })
        .optional(),
      thresholds: z
        .strictObject({
          oldestUnprocessedAge: duration.optional(),
          duplicateRate: z.number().min(0).max(1).optional(),
        })
        .optional(),
      /** At most one alert per condition per window (default 5m); also the duplicate-rate window. */
      window: duration.optional(),
    })
    .optional(),
  destinations: z.record(destinationName, destinationSchema).optional(),
  routes: z.array(routeSchema).optional(),
  sources: z
    .record(
      z.string().regex(/^[a-z0-9][a-z0-9_-]*$/i, {
        message: "a source name may hold letters, digits, '-' and '_' (it appears in the URL)",
      }),
      sourceSchema,
    )
    .optional(),
});

/** The config as written by users (durations and sizes as strings or numbers). */
export type HookinboxConfig = AcceptReadonly<z.input<typeof configSchema>>;
/** One source as written by users. */
export type SourceConfig = AcceptReadonly<z.input<typeof sourceSchema>>;
/** One secret as written by users. */
export type SecretConfig = z.input<typeof secretSchema>;
