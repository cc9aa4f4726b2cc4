import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";

/** The file where `hookinbox start` keeps the demo source's secret between runs. */
export const demoSecretFile = ".hookinbox/demo-secret.json";

/**
 * The config used when no config file exists: the embedded SQLite store and one `demo`
 * Standard Webhooks source whose secret is generated once and kept in `.hookinbox/`.
 *
 * @example
 * ```ts
 * const { config, secret } = demoConfig(process.cwd());
 * ```
 */
export function demoConfig(cwd: string): { config: Record<string, unknown>; secret: string } {
  const file = resolve(cwd, demoSecretFile);
  let secret: string | undefined;
  if (existsSync(file)) {
    secret = (JSON.parse(readFileSync(file, "utf8")) as { secret?: string }).secret;
  }
  if (!secret) {
    secret = `whsec_${randomBytes(24).toString("base64")}`;
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${JSON.stringify({ secret }, null, 2)}\n`, { mode: 0o600 });
  }
  return {
    secret,
    config: { sources: { demo: { provider: "standard-webhooks", secrets: [secret] } } },
  };
}
