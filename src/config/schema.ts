import { z } from "zod";
import type { Handler } from "../handlers/types.ts";
import { isCidr } from "../ingest/ip-allow.ts";
import { presetNames } from "../providers/presets.ts";
import type { DeadLetterAlert } from "../store/queue-types.ts";
import type { DestinationDisabledAlert, EffectHeldAlert } from "./resolve.ts";
import { parseDuration, parseSize } from "./units.ts";

const duration = z.union([z.number(), z.string()]).refine((v) => parseDuration(v) !== undefined, {
  message: 'expected a duration: milliseconds or a string like "500ms", "30s", "15m", "2h"',
});

const size = z.union([z.number(), z.string()]).refine((v) => parseSize(v) !== undefined, {
  message: 'expected a size: bytes or a string like "512kb", "1mb"',
});

const date = z
  .union([z.string(), z.number(), z.date()])
  .refine((v) => !Number.isNaN(new Date(v).getTime()), {
    message: 'expected a date like "2026-12-31" or "2026-12-31T12:00:00Z"',
  });

/** A secret: a literal string, `{ env: "NAME" }`, or either with a rotation window. */
export const secretSchema = z.union([
  z.string().min(1, "a secret must not be empty"),
  z.strictObject({ env: z.string().min(1), notBefore: date.optional(), notAfter: date.optional() }),
  z.strictObject({
    value: z.string().min(1, "a secret must not be empty"),
    notBefore: date.optional(),
    notAfter: date.optional(),
  }),
]);

const identityPath = z
  .string()
  .regex(/^(\$(\.[^.[\]]+|\[\d+\])*|header:[A-Za-z0-9!#$%&'*+.^_`|~-]+)$/, {
    message: 'expected a JSON path like "$.data.object.id" or a header like "header:x-event-id"',
  });

const identitySchema = z.strictObject({
  /**
   * The dedup key: one path, several joined with ":" (a synthetic key from named business
   * fields), or "body:sha256" — only when asked for by name, since two distinct events with
   * identical bodies would then count as one.
   */
  id: z
    .union([
      identityPath,
      z.array(identityPath).min(2, "a composite id names at least two fields"),
      z.literal("body:sha256"),
    ])
    .optional(),
  type: identityPath.optional(),
  orderingKey: identityPath.optional(),
  version: identityPath.optional(),
  occurredAt: identityPath.optional(),
});

const cidr = z.string().refine((v) => isCidr(v), {
  message: 'expected an IPv4 or IPv6 address or CIDR, like "203.0.113.0/24" or "2001:db8::/32"',
});

const publicUrl = z
  .string()
  .url()
  .refine((v) => /^https?:\/\//.test(v), { message: "expected an http(s) URL" });

/** What every source takes besides its secrets. */
const unsigned = {
  identity: identitySchema.optional(),
  /** Only these addresses (after trusted proxies) may deliver to this source. */
  allowIps: z.array(cidr).min(1).optional(),
};

const common = {
  secrets: z.array(secretSchema).min(1, "a source needs at least one secret (fail closed)"),
  ...unsigned,
};

/** Providers whose only option is the timestamp window. */
const withTolerance = <P extends string>(provider: P) =>
  z.strictObject({ provider: z.literal(provider), ...common, tolerance: duration.optional() });

const headerName = z
  .string()
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, { message: "expected an HTTP header name" });

/** Every provider scheme a source may name. */
export const providerNames = [
  "stripe",
  "github",
  "standard-webhooks",
  "hmac",
  "shopify",
  "slack",
  "twilio",
  "hubspot",
  "paddle",
  "square",
  "zoom",
  "linear",
  "discord",
  "gitlab",
  "intercom",
  "twitch",
  "adyen",
  "mercadopago",
  "sendgrid",
  "sns",
  "meta",
  "dropbox",
  "okta",
  "msgraph",
  "asana",
  "mailgun",
  "mollie",
  ...presetNames,
  "pubsub",
  "plaid",
  "paypal",
] as const;

export const sourceSchema = z.discriminatedUnion("provider", [
  z.strictObject({ provider: z.literal("stripe"), ...common, tolerance: duration.optional() }),
  z.strictObject({ provider: z.literal("github"), ...common, allowSha1: z.boolean().optional() }),
  withTolerance("standard-webhooks"),
  z.strictObject({ provider: z.literal("shopify"), ...common }),
  withTolerance("slack"),
  z.strictObject({ provider: z.literal("twilio"), ...common, publicUrl: publicUrl.optional() }),
  z.strictObject({
    provider: z.literal("hubspot"),
    ...common,
    publicUrl: publicUrl.optional(),
    tolerance: duration.optional(),
    allowLegacy: z.boolean().optional(),
  }),
  withTolerance("paddle"),
  z.strictObject({
    provider: z.literal("square"),
    ...common,
    notificationUrl: publicUrl.optional(),
  }),
  withTolerance("zoom"),
  withTolerance("linear"),
  withTolerance("discord"),
  z.strictObject({
    provider: z.literal("gitlab"),
    ...common,
    tolerance: duration.optional(),
    requireSignature: z.boolean().optional(),
  }),
  z.strictObject({ provider: z.literal("intercom"), ...common }),
  withTolerance("twitch"),
  z.strictObject({ provider: z.literal("adyen"), ...common }),
  withTolerance("mercadopago"),
  withTolerance("sendgrid"),
  // Verified with AWS's certificates: no secret; the topics are the binding (fail closed).
  z.strictObject({
    provider: z.literal("sns"),
    ...unsigned,
    topicArns: z
      .array(
        z.string().regex(/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_.-]{1,256}$/, {
          message: 'expected a topic ARN like "arn:aws:sns:eu-west-1:123456789012:orders"',
        }),
      )
      .min(1, "an SNS source accepts only the topics it names (fail closed)"),
    autoConfirm: z.boolean().optional(),
    tolerance: duration.optional(),
  }),
  withTolerance("mailgun"),
  z.strictObject({ provider: z.literal("mollie"), ...common }),
  ...presetNames.map((name) => withTolerance(name)),
  // Verified with Google's keys: the audience and service account are the binding.
  z.strictObject({
    provider: z.literal("pubsub"),
    ...unsigned,
    /** Default: http.publicUrl + "/webhooks/<source>" (Pub/Sub's default audience). */
    audience: z.string().min(1).optional(),
    serviceAccountEmails: z
      .array(z.string().email("expected a service account email"))
      .min(1, "a Pub/Sub source accepts only the service accounts it names (fail closed)"),
    tolerance: duration.optional(),
  }),
  z.strictObject({
    provider: z.literal("plaid"),
    ...common,
    clientId: z.string().min(1),
    environment: z.enum(["production", "sandbox", "development"]).optional(),
    tolerance: duration.optional(),
  }),
  // Verified with PayPal's certificates: the webhook id is the binding.
  z.strictObject({
    provider: z.literal("paypal"),
    ...unsigned,
    webhookIds: z
      .array(z.string().regex(/^[A-Za-z0-9-]{1,64}$/, { message: "expected a PayPal webhook id" }))
      .min(1, "a PayPal source needs its webhook id (fail closed)"),
    tolerance: duration.optional(),
  }),
  // Handshakes beyond POST (src/providers/challenges.ts).
  z.strictObject({
    provider: z.literal("meta"),
    ...common,
    /** The verify token(s) typed into the Meta app dashboard (answers the GET handshake). */
    verifyTokens: z.array(secretSchema).min(1, "Meta's GET handshake needs a verify token"),
  }),
  z.strictObject({ provider: z.literal("dropbox"), ...common }),
  z.strictObject({
    provider: z.literal("okta"),
    ...common,
    /** The event hook's "Authentication field" header. Default `authorization`. */
    header: headerName.optional(),
  }),
  z.strictObject({ provider: z.literal("msgraph"), ...common }),
  z
    .strictObject({
      provider: z.literal("asana"),
      ...unsigned,
      // Optional: Asana hands out the secret in its handshake, after the source exists.
      secrets: z.array(secretSchema).optional(),
      acceptHandshake: z.boolean().optional(),
    })
    .refine((s) => (s.secrets?.length ?? 0) > 0 || s.acceptHandshake === true, {
      message:
        "an asana source needs secrets, or acceptHandshake: true while its webhook is created (fail closed)",
      path: ["secrets"],
    }),
  z
    .strictObject({
      provider: z.literal("hmac"),
      ...common,
      header: headerName,
      prefix: z.string().optional(),
      algorithm: z.enum(["sha1", "sha256", "sha512"]).optional(),
      encoding: z.enum(["hex", "base64"]).optional(),
      secretEncoding: z.enum(["utf8", "base64", "hex"]).optional(),
      signedContent: z.string().min(1).optional(),
      timestampHeader: headerName.optional(),
      timestampUnit: z.enum(["s", "ms"]).optional(),
      idHeader: headerName.optional(),
      tolerance: duration.optional(),
    })
    .refine((s) => s.idHeader !== undefined || s.identity?.id !== undefined, {
      message:
        'an hmac source needs an event id: set idHeader or identity.id (e.g. "$.eventId"); a body hash is never used by default',
      path: ["identity", "id"],
    }),
]);

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

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/** One destination URL events are forwarded to (see docs/forwarding.md). */
export const destinationSchema = z.strictObject({
  url: publicUrl,
  /** Standard Webhooks secret(s) (`whsec_…`); with several active, every one signs (rotation). */
  secret: z.union([secretSchema, z.array(secretSchema).min(1)]),
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
  /** Extra headers sent with every request (e.g. an Authorization the app expects). */
  headers: z.record(headerName, z.string()).optional(),
  /** More original request headers to forward, beyond the documented allowlist. */
  forwardHeaders: z.array(headerName).optional(),
  /** Allows loopback, private, link-local, CGNAT and metadata addresses (off by default: SSRF). */
  allowPrivateNetworks: z.boolean().optional(),
  retry: retrySchema.optional(),
  onDeadLetter: z.enum(["block", "continue"]).optional(),
  /** Stops attempts after `failures` in a row for `cooldown`, then probes with one; false turns it off. */
  circuitBreaker: z
    .union([
      z.literal(false),
      z.strictObject({
        failures: z.number().int().min(1).optional(),
        cooldown: duration.optional(),
      }),
    ])
    .optional(),
});

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
      /** On shutdown, requests in progress get this long before their connections close (default 10s). */
      drainTimeout: duration.optional(),
      /** The public base URL providers call (Twilio, HubSpot and Square sign it). */
      publicUrl: publicUrl.optional(),
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
  admin: z.strictObject({ token: secretSchema.optional() }).optional(),
  /**
   * Retention. `payloads`: bodies and headers of events older than this are purged by
   * `hookinbox retention run` once every delivery of the event is finished; the event row, its
   * digests and its audit leaf stay, so proofs still verify. Off when unset.
   */
  retention: z.strictObject({ payloads: duration.optional() }).optional(),
  /**
   * The tamper-evident log (on by default): every accepted event is a Merkle leaf; heads are
   * signed with `key` (Ed25519; default `HOOKINBOX_AUDIT_KEY`, else a key file made on first
   * start), every `headInterval` when the log grew (default 1m), and sent to `witness`.
   */
  audit: z
    .strictObject({
      enabled: z.boolean().optional(),
      key: z.union([z.string().min(1), z.strictObject({ env: z.string().min(1) })]).optional(),
      headInterval: duration.optional(),
      witness: z
        .strictObject({ file: z.string().min(1).optional(), url: publicUrl.optional() })
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
      /** Alerts as Standard Webhooks messages, sent from the store's outbox until 2xx. */
      webhook: z
        .strictObject({
          url: publicUrl,
          secret: secretSchema,
          headers: z.record(z.string(), z.string()).optional(),
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

/**
 * A written config type that also takes readonly arrays and objects (`as const`, or values from a
 * frozen module): the schema only reads them. Functions (handlers) are left as they are.
 */
type AcceptReadonly<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends Date
    ? T
    : T extends readonly (infer U)[]
      ? readonly AcceptReadonly<U>[]
      : T extends object
        ? { readonly [K in keyof T]: AcceptReadonly<T[K]> }
        : T;

/** The config as written by users (durations and sizes as strings or numbers). */
export type HookinboxConfig = AcceptReadonly<z.input<typeof configSchema>>;
/** One source as written by users. */
export type SourceConfig = AcceptReadonly<z.input<typeof sourceSchema>>;
/** One secret as written by users. */
export type SecretConfig = z.input<typeof secretSchema>;
