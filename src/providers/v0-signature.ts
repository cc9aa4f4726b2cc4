import { decodeHex, hmac } from "./crypto.ts";
import {
  findMatchingSecret,
  requireHeader,
  requireSecrets,
  requireTimestampHeader,
  taggedValue,
  utf8Secret,
} from "./match.ts";
import { checkTimestamp, parseTimestampSeconds } from "./timestamps.ts";
import type { Verified, Verifier } from "./types.ts";

/**
 * The `v0` scheme Slack and Zoom share: `<header>: v0=<hex>`, HMAC-SHA256 (secret as UTF-8) over
 * `v0:{timestamp header}:{raw body}`, the timestamp in integer seconds and checked both ways after
 * the signature.
 *
 * @example
 * ```ts
 * const verifier = v0Verifier({ header: "x-slack-signature", timestampHeader: "x-slack-request-timestamp", toleranceMs: 300_000 });
 * ```
 */
export function v0Verifier(options: {
  header: string;
  timestampHeader: string;
  toleranceMs: number;
}): Verifier {
  return {
    verify(request, secrets, nowMs): Verified {
      requireSecrets(secrets);
      const header = requireHeader(request.headers, options.header);
      const digest = decodeHex(taggedValue(header, "v0", options.header));
      const timestamp = requireTimestampHeader(request.headers, options.timestampHeader);
      const signedAt = parseTimestampSeconds(timestamp);
      const secretIndex = findMatchingSecret(
        secrets,
        utf8Secret,
        (key) => hmac("sha256", key, ["v0:", timestamp, ":", request.body]),
        digest === undefined ? [] : [digest],
      );
      checkTimestamp(signedAt, nowMs, options.toleranceMs);
      return { secretIndex, signedAt };
    },
  };
}
