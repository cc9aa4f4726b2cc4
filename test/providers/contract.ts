/**
 * Properties every HMAC provider scheme must have, run against each scheme by its test file:
 * raw-bytes verification, rotation, fail-closed without secrets, no leaks in messages.
 */

import { describe, expect, it } from "vitest";
import type { ProviderScheme, SignedRequest } from "../../src/providers/types.js";
import { expectRejected, secrets, signedRequest } from "./helpers.js";

export interface SchemeFixture {
  /** Distinguishes several fixtures of one provider in the report. */
  readonly label?: string;
  readonly scheme: ProviderScheme;
  /** The secret `sign` uses, and one that does not match it. */
  readonly secret: string;
  readonly otherSecret: string;
  /** "Now" for verification; `sign` signs at this instant when the scheme has a timestamp. */
  readonly nowMs: number;
  /** Headers of a request correctly signed over `body` with `secret`. */
  sign(body: string, secret: string): Record<string, string>;
}

const BODY = '{"id":"evt_1","type":"invoice.paid","data":{"object":{"id":"in_1","amount":42}}}';

export function describeSchemeContract(fixture: SchemeFixture): void {
  const { scheme, secret, otherSecret, nowMs } = fixture;
  const request = (body = BODY, signWith = secret): SignedRequest =>
    signedRequest(body, fixture.sign(BODY, signWith));
  const verify = (req: SignedRequest, active = secrets(secret)) =>
    scheme.verifier.verify(req, active, nowMs);

  describe(`${scheme.provider}${fixture.label ? ` (${fixture.label})` : ""}: contract`, () => {
    it("accepts a correctly signed request and names the matching secret", () => {
      expect(verify(request()).secretIndex).toBe(0);
    });

    it.each([
      ["pretty-printed", JSON.stringify(JSON.parse(BODY), null, 2)],
      ["spaces after commas", BODY.replace(/,/g, ", ")],
      ["trailing newline", `${BODY}\n`],
    ])(
      "verifies raw bytes: the same JSON re-serialised (%s) is rejected",
      (_name, reserialised) => {
        expect(reserialised).not.toBe(BODY);
        expect(JSON.parse(reserialised)).toEqual(JSON.parse(BODY));
        expectRejected(() => verify(request(reserialised)), "HOOKINBOX_SIGNATURE_MISMATCH", 401);
      },
    );

    it("does not modify the body it verifies", () => {
      const req = request();
      const before = Buffer.from(req.body);
      verify(req);
      expect(Buffer.from(req.body).equals(before)).toBe(true);
    });

    it("rotation: the second active secret matches → its index", () => {
      expect(verify(request(), secrets(otherSecret, secret)).secretIndex).toBe(1);
    });

    it("rotation: reports the configured index, not the position", () => {
      const active = [
        { index: 3, value: otherSecret },
        { index: 7, value: secret },
      ];
      expect(verify(request(), active).secretIndex).toBe(7);
    });

    it("rotation: signed with the newer secret while the older one is listed first", () => {
      expect(verify(request(BODY, otherSecret), secrets(secret, otherSecret)).secretIndex).toBe(1);
    });

    it("rotation: no active secret matches → MISMATCH", () => {
      expectRejected(
        () => verify(request(), secrets(otherSecret, otherSecret)),
        "HOOKINBOX_SIGNATURE_MISMATCH",
        401,
        [secret, otherSecret],
      );
    });

    it("fails closed with zero active secrets, even for a well-signed request", () => {
      expectRejected(() => verify(request(), []), "HOOKINBOX_SOURCE_NO_ACTIVE_SECRET", 503);
    });

    it("fails closed with zero active secrets before looking at the request", () => {
      expectRejected(
        () => verify(signedRequest(BODY, {}), []),
        "HOOKINBOX_SOURCE_NO_ACTIVE_SECRET",
        503,
      );
    });

    it("never puts the secret, the signature or the body in an error message", () => {
      const headers = fixture.sign(BODY, secret);
      const error = expectRejected(
        () => verify(signedRequest(`${BODY} `, headers)),
        "HOOKINBOX_SIGNATURE_MISMATCH",
        401,
      );
      expect(error.message).not.toContain(secret);
      expect(error.message).not.toContain("evt_1");
      for (const value of Object.values(headers)) {
        for (const piece of value.split(/[\s,=;]+/)) {
          if (piece.length >= 16) expect(error.message).not.toContain(piece);
        }
      }
    });
  });
}
