import { createHash } from "node:crypto";
import { readField } from "../ingest/identify.ts";
import type { IdentityField, IdentitySpec } from "../providers/types.ts";

/** An identity as written in a config file (see `identity` in the config schema). */
export interface IdentityConfig {
  readonly id?: string | readonly string[];
  readonly type?: string;
  readonly orderingKey?: string;
  readonly version?: string;
  readonly occurredAt?: string;
}

function compositeId(paths: readonly string[]): IdentityField {
  return (context) => {
    const parts: string[] = [];
    for (const path of paths) {
      const value = readField(path, context);
      if (value === undefined || value === null || value === "") return undefined;
      parts.push(String(value));
    }
    return parts.join(":");
  };
}

const bodyHash: IdentityField = (context) =>
  context.body ? `sha256:${createHash("sha256").update(context.body).digest("hex")}` : undefined;

/**
 * Compiles a source's `identity` overrides: a composite id (every field must be present, joined
 * with ":") and the opt-in body hash become functions; plain paths stay paths.
 *
 * @example
 * ```ts
 * compileIdentity({ id: ["$.pspReference", "$.eventCode"] }).id; // (context) => "881:AUTHORISATION"
 * ```
 */
export function compileIdentity(config: IdentityConfig | undefined): IdentitySpec {
  if (!config) return {};
  const { id, ...rest } = config;
  const spec: Record<string, IdentityField> = {};
  for (const [key, value] of Object.entries(rest)) if (value !== undefined) spec[key] = value;
  if (id === "body:sha256") spec.id = bodyHash;
  else if (Array.isArray(id)) spec.id = compositeId(id);
  else if (typeof id === "string") spec.id = id;
  return spec;
}
