/**
 * Signing material for the samples of providers that sign with their private keys and publish
 * the public half at a URL (SNS and PayPal certificates, Google's JWKS, Plaid's key endpoint).
 * A sample cannot sign with the provider's own key, so it signs with a test key, and
 * `keyFetcher` answers the provider's key URLs with that key's public half: a receiver verifies
 * the sample only when it is given that fetcher (`createInbox(config, { keyFetcher })`, as the
 * tests do). The secret a sample signs with is PEM text: a private key, followed by its
 * certificate where the provider serves certificates.
 */

import { createPrivateKey, createPublicKey, type KeyObject, X509Certificate } from "node:crypto";
import type { KeyFetcher, KeyFetchRequest } from "../../providers/keys/index.ts";

/**
 * A self-signed RSA test key and certificate (valid 2025 to 2124), for examples and tests only:
 * it is published here, so it proves nothing outside a test.
 */
export const EXAMPLE_RSA_BUNDLE = [
  "-----BEGIN PRIVATE KEY-----",
  "MIIEvwIBADANBgkqhkiG9w0BAQEFAASCBKkwggSlAgEAAoIBAQC2F86tBHfBCJ4u",
  "f7GiZAJLhQZjA2IUo/0n+b3P+jfo4GTYurEofmFwVNYpK3TWe0d7UItTCZpD1mdx",
  "2erMOAmGhPybFZA1s/RbjjyudMqvtKAwS2+QpQ0/bPZw0DxhFp1kJd1m2eC542a0",
  "yKTw4szK6HXELgEYd5mpoaTRLdnCnIG49T+oNKkFGqKA5HPGmi1Vs+llh+ClQEFE",
  "8H1NlxCURqbJnC2OJTlpoFl2Adf6GVRpJiwBCO5+4rOeg7LD92LsF+fAqwu0J5Xj",
  "OESnL0nrHg9Kdjyxct9x4tBMcizK6SEKr3uZR/a4RmGw8JI4KgfXzMnobrejB0yL",
  "eoJGGkI5AgMBAAECggEAI7CE3JpsklQLFNgIS+jIHl8jQlLObXc6zhP/5PyI6sbY",
  "XTYyNNqYZHjsRMN0sfkVqJC/zfWq27LxMXphr8cn7sqv7AGM80mjEjLNp+/SLh/7",
  "6ZtPcY04DH9hyfi2bN0O2islutvnVOfCIJrW4TPCqd5n/px5sH74iivZbvpKnP7U",
  "93PDYgNg07rmMA51y0L2Ivyoquu5Cyrj0/D95dBBKwfJdDqBM0QMW+AnwkP9I9/a",
  "8G3GtcvtBXadFepv632c6HRwmPGELArW5pRrOXboWmqbKo2zCBwr7rscWdZTstM4",
  "k6F7MjkRBZkCOjVBBr77Hy17TaTvGTqXE+Bs9WuEFQKBgQDpKHpO+8vH9myg60qR",
  "+CyyxW5j8mOt0hJiQxrePCq006otWXePBUM0oU5AqLH9WgePtubJ0Izc4DiOlvsJ",
  "U2cnHDD8lDt+NMArGf3/Odo+8SXgTqkVeZRz/PefmcBoABiDYRBGi/1bUJ8aBPdj",
  "bytwVNNI2J3qUI/eegJS5MReCwKBgQDH7qJ25/H13K5TowVd/s1u9yJP3dam4Q0+",
  "9AbPx9vd46EHVsDNNxXiQ++SETfexf8Emx1XKB8POG5scqB7PllrGsB+IRfmCQUa",
  "mX0zJ1XsZcBZIdmtbiJM3b/SMPoVchakQyk0no40WplF0GAyJz41+Ks1tEXQ2LNp",
  "ttaJYwo/SwKBgQCXeW2kfJ9ShLzj+pjSpknbxrpGAoZRueWpovEEqlAQdGbd2X78",
  "Eq4rthQRm8cu0luROYFMYcnyAVWdBWeIEoA0f3Mv1Nmlz319QwCp3Jr2Q1KZHGFr",
  "Czav+Aujy46dwloqmFerjW0G8yS6EbnrBqFQ9Drj258USEx/fAKgefE9KwKBgQDD",
  "XLymIfl9/HjfwxFQitXk01pU3nmMMacG1978E9gVVwOXrz7QiD47DZVAjtCgP6r0",
  "rjmaW9sVvVexYsTMCN3JWae019OJdVDmcAs1+/7q83Zj4j7ZSB/+KkTxN+h3Ijdb",
  "pUDTaQedwtW4sWf+OfiBNo7d+FysOcP+zamPMBboRwKBgQDRKodge9aVhxkNsUnf",
  "AQ7+PqYW43o8fw6UK9UoMu7C9jC/xkdZJzEWMYDdX5Sgss/jsqFELKpPsWLDEt0b",
  "Jqab/GSDhbX2byylhKPD9VDMph6JPdGJcz8MSRTzb59wE6MaJNP0mKJcEP7kj1vu",
  "gNZBtd0wfJcEVhpJzJM88pJe9g==",
  "-----END PRIVATE KEY-----",
  "-----BEGIN CERTIFICATE-----",
  "MIIDUDCCAjigAwIBAgIJOnKBCunDBX+FMA0GCSqGSIb3DQEBCwUAMC4xLDAqBgNV",
  "BAMTI2hvb2tpbmJveCBzYW1wbGUgc2lnbmVyICh0ZXN0IG9ubHkpMCAXDTI1MDEw",
  "MTAwMDAwMFoYDzIxMjQxMjMxMDAwMDAwWjAuMSwwKgYDVQQDEyNob29raW5ib3gg",
  "c2FtcGxlIHNpZ25lciAodGVzdCBvbmx5KTCCASIwDQYJKoZIhvcNAQEBBQADggEP",
  "ADCCAQoCggEBALYXzq0Ed8EIni5/saJkAkuFBmMDYhSj/Sf5vc/6N+jgZNi6sSh+",
  "YXBU1ikrdNZ7R3tQi1MJmkPWZ3HZ6sw4CYaE/JsVkDWz9FuOPK50yq+0oDBLb5Cl",
  "DT9s9nDQPGEWnWQl3WbZ4LnjZrTIpPDizMrodcQuARh3mamhpNEt2cKcgbj1P6g0",
  "qQUaooDkc8aaLVWz6WWH4KVAQUTwfU2XEJRGpsmcLY4lOWmgWXYB1/oZVGkmLAEI",
  "7n7is56DssP3YuwX58CrC7QnleM4RKcvSeseD0p2PLFy33Hi0ExyLMrpIQqve5lH",
  "9rhGYbDwkjgqB9fMyehut6MHTIt6gkYaQjkCAwEAAaNvMG0wDAYDVR0TAQH/BAIw",
  "ADAOBgNVHQ8BAf8EBAMCBaAwHQYDVR0lBBYwFAYIKwYBBQUHAwEGCCsGAQUFBwMC",
  "MC4GA1UdEQQnMCWCI2hvb2tpbmJveCBzYW1wbGUgc2lnbmVyICh0ZXN0IG9ubHkp",
  "MA0GCSqGSIb3DQEBCwUAA4IBAQB1O56+yN3hScZrywZ/VOTTymLiSuuH9smmDuCq",
  "LnKVTcKAbJOwTaLKQu7RcEOLcOfdC4xgDyqNU5RcC7+ullndo88qIzqCkee9bDPu",
  "NIJfWBBcWirivUvd45nqbJFfhhOLg3undBjqg6naL3MuntmK1oo+E/2rqwF/J+zK",
  "g82lkRhPZER+2TstSo67hig52tEeA7PGauHuI8V3IU3CP1gV0O43vik23tkWKI/L",
  "cW0cEhuHwPI2txEsuHuyzOcB6AlUmkmo+Fns1samCNYs9tvo8/0B/2lT5eGhgQ01",
  "au5l8237LXnlQwowYV3MlQ5fvJB8+0EBFdKWTvoWLD+isZXQ",
  "-----END CERTIFICATE-----",
].join("\n");

/**
 * The private key of a PEM secret (the first `PRIVATE KEY` block), or of base64 PKCS#8 DER.
 *
 * @example
 * ```ts
 * samplePrivateKey(EXAMPLE_RSA_BUNDLE).asymmetricKeyType; // "rsa"
 * ```
 */
export function samplePrivateKey(secret: string): KeyObject {
  const text = secret.trim();
  return text.includes("-----BEGIN")
    ? createPrivateKey(text)
    : createPrivateKey({ key: Buffer.from(text, "base64"), format: "der", type: "pkcs8" });
}

/**
 * The certificate of a PEM secret (its `CERTIFICATE` block).
 *
 * @throws RangeError when the secret holds no certificate.
 * @example
 * ```ts
 * sampleCertificate(EXAMPLE_RSA_BUNDLE); // "-----BEGIN CERTIFICATE-----…"
 * ```
 */
export function sampleCertificate(secret: string): string {
  const start = secret.indexOf("-----BEGIN CERTIFICATE-----");
  const end = secret.indexOf("-----END CERTIFICATE-----");
  if (start < 0 || end < 0) {
    throw new RangeError("this sample signs with a PEM private key followed by its certificate");
  }
  const pem = `${secret.slice(start, end)}-----END CERTIFICATE-----\n`;
  new X509Certificate(pem);
  return pem;
}

/**
 * The public JWK of a secret's private key, with `kid` and `alg`.
 *
 * @example
 * ```ts
 * samplePublicJwk(EXAMPLE_RSA_BUNDLE, "k1", "RS256").kty; // "RSA"
 * ```
 */
export function samplePublicJwk(secret: string, kid: string, alg: string): Record<string, unknown> {
  const jwk = createPublicKey(samplePrivateKey(secret)).export({ format: "jwk" });
  return { ...jwk, kid, alg, use: "sig" };
}

/**
 * A fetcher that answers the requests `answer` recognises (`undefined` → 404).
 *
 * @example
 * ```ts
 * answeringFetcher((r) => (r.url === certUrl ? certificatePem : undefined));
 * ```
 */
export function answeringFetcher(
  answer: (request: KeyFetchRequest) => string | undefined,
): KeyFetcher {
  return async (request) => {
    const body = answer(request);
    return body === undefined ? { status: 404, body: "" } : { status: 200, body };
  };
}

/**
 * One fetcher over several: each request goes to the first that does not answer 404.
 *
 * @example
 * ```ts
 * const fetcher = firstAnswering([snsFetcher, paypalFetcher]);
 * ```
 */
export function firstAnswering(fetchers: readonly KeyFetcher[]): KeyFetcher {
  return async (request) => {
    for (const fetcher of fetchers) {
      const response = await fetcher(request);
      if (response.status !== 404) return response;
    }
    return { status: 404, body: "" };
  };
}

/**
 * A compact JWS (`header.payload.signature`, base64url), signed by `sign` over the first two.
 *
 * @example
 * ```ts
 * compactJws({ alg: "RS256", kid: "k1" }, { iat: 1 }, (data) => sign("sha256", data, key));
 * ```
 */
export function compactJws(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  sign: (data: Buffer) => Buffer,
): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const signingInput = `${part(header)}.${part(payload)}`;
  return `${signingInput}.${sign(Buffer.from(signingInput)).toString("base64url")}`;
}
