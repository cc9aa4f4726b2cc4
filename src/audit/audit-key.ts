import { createPrivateKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { hookinboxError } from "../errors.ts";

/** The PKCS#8 DER prefix of an Ed25519 private key (RFC 8410); the 32-byte seed follows. */
const ED25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/**
 * Reads an Ed25519 private key from text: a PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), or the
 * 32-byte seed as 64 hex digits or as base64. Throws HOOKINBOX_AUDIT_KEY_INVALID (naming where it
 * came from, never the key).
 *
 * @example
 * ```ts
 * parseAuditKey(process.env.HOOKINBOX_AUDIT_KEY!, "HOOKINBOX_AUDIT_KEY");
 * ```
 */
export function parseAuditKey(text: string, where: string): KeyObject {
  const trimmed = text.trim();
  try {
    let key: KeyObject;
    if (trimmed.startsWith("-----BEGIN")) {
      key = createPrivateKey({ key: trimmed, format: "pem" });
    } else {
      const seed = /^[0-9a-f]{64}$/i.test(trimmed)
        ? Buffer.from(trimmed, "hex")
        : Buffer.from(trimmed, "base64");
      if (seed.length !== 32) throw new Error("not 32 bytes");
      key = createPrivateKey({
        key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]),
        format: "der",
        type: "pkcs8",
      });
    }
    if (key.asymmetricKeyType !== "ed25519") throw new Error("not Ed25519");
    return key;
  } catch {
    throw hookinboxError(
      "HOOKINBOX_AUDIT_KEY_INVALID",
      `${where} is not an Ed25519 private key (PKCS#8 PEM, or a 32-byte seed as hex or base64)`,
    );
  }
}

/**
 * The audit signing key: the configured one (`audit.key`, else `HOOKINBOX_AUDIT_KEY`), else the
 * key file, created with a new key on first start (mode 0600; created exclusively, so processes
 * starting together on one machine end up with the same key).
 *
 * @example
 * ```ts
 * const { key, generated } = loadAuditKey(null, ".hookinbox/audit-ed25519.pem");
 * ```
 */
export function loadAuditKey(
  configured: string | null,
  file: string,
): { key: KeyObject; generated: boolean; from: string } {
  if (configured !== null)
    return { key: parseAuditKey(configured, "audit.key"), generated: false, from: "audit.key" };
  try {
    return { key: parseAuditKey(readFileSync(file, "utf8"), file), generated: false, from: file };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const { privateKey } = generateKeyPairSync("ed25519");
  const pem = privateKey.export({ format: "pem", type: "pkcs8" }).toString();
  mkdirSync(dirname(file), { recursive: true });
  try {
    writeFileSync(file, pem, { mode: 0o600, flag: "wx" });
  } catch (error) {
    // Another process created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return { key: parseAuditKey(readFileSync(file, "utf8"), file), generated: false, from: file };
  }
  return { key: privateKey, generated: true, from: file };
}

/**
 * Where the generated key lives when none is configured: beside an SQLite database file, else
 * `.hookinbox/audit-ed25519.pem` under the working directory.
 *
 * @example
 * ```ts
 * auditKeyFile("sqlite:./.hookinbox/hookinbox.db", "/srv/app"); // "/srv/app/.hookinbox/audit-ed25519.pem"
 * ```
 */
export function auditKeyFile(storeUrl: string, cwd: string): string {
  const sqlite = /^sqlite:(.+)$/i.exec(storeUrl.trim())?.[1];
  const folder =
    sqlite && sqlite !== ":memory:" && !sqlite.startsWith("//")
      ? dirname(resolve(cwd, sqlite))
      : join(cwd, ".hookinbox");
  return join(folder, "audit-ed25519.pem");
}
