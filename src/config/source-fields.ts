/**
 * The zod pieces a source's options are made of. Provider definitions (src/providers/*.ts) build
 * their options from these; the config schema (schema.ts) reuses them for everything else.
 */

import { z } from "zod";
import { isCidr } from "../ingest/ip-allow.ts";
import { parseDuration } from "./units.ts";

/** A duration: milliseconds, or a string like "30s". */
export const duration = z
  .union([z.number(), z.string()])
  .refine((v) => parseDuration(v) !== undefined, {
    message: 'expected a duration: milliseconds or a string like "500ms", "30s", "15m", "2h"',
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

/** An IPv4 or IPv6 address or CIDR. */
export const cidr = z.string().refine((v) => isCidr(v), {
  message: 'expected an IPv4 or IPv6 address or CIDR, like "203.0.113.0/24" or "2001:db8::/32"',
});

/** An http(s) URL. */
export const publicUrl = z
  .string()
  .url()
  .refine((v) => /^https?:\/\//.test(v), { message: "expected an http(s) URL" });

/** An HTTP header name. */
export const headerName = z
  .string()
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, { message: "expected an HTTP header name" });

/** What every source takes besides its secrets: identity overrides and an IP allowlist. */
export const unsigned = {
  identity: identitySchema.optional(),
  /** Only these addresses (after trusted proxies) may deliver to this source. */
  allowIps: z.array(cidr).min(1).optional(),
};

/** What every source verified with secrets takes: at least one secret, and `unsigned`. */
export const signed = {
  secrets: z.array(secretSchema).min(1, "a source needs at least one secret (fail closed)"),
  ...unsigned,
};

/** A signed source whose only option is its timestamp window. */
export const signedWithTolerance = { ...signed, tolerance: duration.optional() };

/** A secret as written in a config. */
export type SecretValue = z.input<typeof secretSchema>;
