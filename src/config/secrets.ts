import { hookinboxError } from "../errors.ts";
import type { SecretConfig } from "./schema.ts";

/** A secret resolved at boot: its value and rotation window. Never logged. */
export interface ResolvedSecret {
  readonly index: number;
  readonly value: string;
  readonly notBefore: number | null;
  readonly notAfter: number | null;
}

function toMs(value: string | number | Date | undefined): number | null {
  return value === undefined ? null : new Date(value).getTime();
}

/**
 * Resolves one configured secret, reading `{ env }` from the environment. The error names the
 * config key and the variable, never a value.
 *
 * @example
 * ```ts
 * resolveSecret({ env: "STRIPE_WEBHOOK_SECRET" }, 0, "sources.stripe.secrets[0]", process.env);
 * ```
 */
export function resolveSecret(
  secret: SecretConfig,
  index: number,
  where: string,
  env: Record<string, string | undefined>,
): ResolvedSecret {
  if (typeof secret === "string") return { index, value: secret, notBefore: null, notAfter: null };
  let value: string;
  if ("env" in secret) {
    const fromEnv = env[secret.env];
    if (fromEnv === undefined || fromEnv === "") {
      throw hookinboxError(
        "HOOKINBOX_SECRET_ENV_MISSING",
        `${where} reads environment variable ${secret.env}, which is not set; export it or change the config`,
      );
    }
    value = fromEnv;
  } else {
    value = secret.value;
  }
  return { index, value, notBefore: toMs(secret.notBefore), notAfter: toMs(secret.notAfter) };
}

/**
 * The secrets valid at `nowMs`, in configured order (rotation: several may be valid at once).
 *
 * @example
 * ```ts
 * activeSecrets(source.secrets, Date.now());
 * ```
 */
export function activeSecrets(secrets: readonly ResolvedSecret[], nowMs: number): ResolvedSecret[] {
  return secrets.filter(
    (s) =>
      (s.notBefore === null || s.notBefore <= nowMs) && (s.notAfter === null || nowMs < s.notAfter),
  );
}
