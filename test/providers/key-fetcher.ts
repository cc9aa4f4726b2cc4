/**
 * An offline key fetcher for the fetched-key schemes (SNS, Pub/Sub, Plaid, PayPal): it answers
 * from a function and records every request, so tests can count fetches and prove that a refused
 * URL never reached it. Also makes self-signed certificates for the certificate schemes.
 */

import { generate } from "selfsigned";
import type {
  KeyFetcher,
  KeyFetchRequest,
  KeyFetchResponse,
} from "../../src/providers/keys/index.ts";

export interface OfflineFetcher {
  readonly fetcher: KeyFetcher;
  /** Every request the scheme made, in order. */
  readonly calls: KeyFetchRequest[];
  /** The URLs of `calls`. */
  urls(): string[];
}

/** A fetcher that answers with `answer(request)` and records the request. */
export function offlineFetcher(
  answer: (request: KeyFetchRequest) => KeyFetchResponse | Promise<KeyFetchResponse>,
): OfflineFetcher {
  const calls: KeyFetchRequest[] = [];
  return {
    calls,
    urls: () => calls.map((c) => c.url),
    fetcher: async (request) => {
      calls.push(request);
      return answer(request);
    },
  };
}

/** A fetcher answer that never comes (a key endpoint that hangs). */
export const never = (): Promise<KeyFetchResponse> => new Promise(() => undefined);

/** A self-signed certificate and its private key (PEM), valid from 2020-01-01 until a year from now. */
export async function selfSignedCertificate(
  commonName: string,
  validity: { notBefore?: Date; notAfter?: Date } = {},
): Promise<{ cert: string; privateKey: string }> {
  // Valid from long before any fixed instant a test signs at (tests pin dates such as
  // 2026-11-30), so a certificate made today still covers them; a year past today by default.
  const notBeforeDate = validity.notBefore ?? new Date("2020-01-01T00:00:00Z");
  const result = await generate([{ name: "commonName", value: commonName }], {
    keySize: 2048,
    algorithm: "sha256",
    notBeforeDate,
    notAfterDate: validity.notAfter ?? new Date(Date.now() + 366 * 86_400_000),
  });
  return { cert: result.cert, privateKey: result.private };
}
