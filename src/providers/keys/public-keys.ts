/**
 * Turning what a key endpoint sent into a node:crypto public key: a PEM certificate (SNS, PayPal)
 * or a JWK (Google, Plaid). Nothing here fetches; see fetcher.ts and cache.ts.
 */

import {
  createPublicKey,
  type JsonWebKey,
  type KeyObject,
  verify as verifySignature,
  X509Certificate,
} from "node:crypto";
import { hookinboxError } from "../../errors.ts";

/** A certificate's public key and validity period (ms since the epoch). */
export interface CertifiedKey {
  readonly key: KeyObject;
  readonly notBefore: number;
  readonly notAfter: number;
}

/**
 * The public key and validity of the first certificate in a PEM document. A document that is no
 * certificate is HOOKINBOX_KEY_UNAVAILABLE (the endpoint misbehaved: 503, the sender retries).
 *
 * @example
 * ```ts
 * const { key, notAfter } = parseCertificate(await fetchKeyText(fetcher, request, rules));
 * ```
 */
export function parseCertificate(pem: string): CertifiedKey {
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(pem);
  } catch (error) {
    throw hookinboxError("HOOKINBOX_KEY_UNAVAILABLE", "the key URL sent no certificate", error);
  }
  return {
    key: certificate.publicKey,
    notBefore: Date.parse(certificate.validFrom),
    notAfter: Date.parse(certificate.validTo),
  };
}

/**
 * A public key from a JWK object, or `undefined` when it is not a usable public key.
 *
 * @example
 * ```ts
 * jwkKey({ kty: "EC", crv: "P-256", x: "…", y: "…" }); // KeyObject
 * ```
 */
export function jwkKey(jwk: unknown): KeyObject | undefined {
  if (typeof jwk !== "object" || jwk === null) return undefined;
  try {
    const key = createPublicKey({ key: jwk as JsonWebKey, format: "jwk" });
    return key.type === "public" ? key : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads a JWKS document (`{ "keys": [ … ] }`) into keys by `kid`; keys without a `kid` or that
 * do not parse are skipped. A document that is not a JWKS is HOOKINBOX_KEY_UNAVAILABLE.
 *
 * @example
 * ```ts
 * const keys = parseJwks(await fetchKeyText(fetcher, jwksRequest, [googleRule]));
 * keys.get("a1b2…"); // KeyObject
 * ```
 */
export function parseJwks(text: string): Map<string, KeyObject> {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw hookinboxError("HOOKINBOX_KEY_UNAVAILABLE", "the key set is not JSON", error);
  }
  const list = (document as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(list)) {
    throw hookinboxError("HOOKINBOX_KEY_UNAVAILABLE", "the key set has no keys");
  }
  const keys = new Map<string, KeyObject>();
  for (const jwk of list) {
    const kid = (jwk as { kid?: unknown } | null)?.kid;
    const key = jwkKey(jwk);
    if (typeof kid === "string" && key !== undefined) keys.set(kid, key);
  }
  return keys;
}

/**
 * Whether `signature` is an RSA PKCS#1 v1.5 signature of `data` with `hash` by `key`; a key that
 * is not RSA never verifies (SNS and PayPal certificates are RSA).
 *
 * @example
 * ```ts
 * rsaSignatureValid("sha256", Buffer.from(stringToSign), certificateKey, signature);
 * ```
 */
export function rsaSignatureValid(
  hash: "sha1" | "sha256",
  data: Buffer,
  key: KeyObject,
  signature: Buffer,
): boolean {
  try {
    return key.asymmetricKeyType === "rsa" && verifySignature(hash, data, key, signature);
  } catch {
    return false;
  }
}
