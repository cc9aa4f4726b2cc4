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
  /** The JSON body to sign, when the scheme needs a particular shape (default: a small event). */
  readonly body?: string;
  /** The request url (path and query), when the scheme signs it (default `/webhooks/test`). */
  readonly url?: string;
  /**
   * False for schemes that do not sign the raw bytes (Mercado Pago signs a manifest, GitLab's
   * token signs nothing, Adyen signs fields): the raw-bytes checks are skipped for them.
   */
  readonly signsBody?: boolean;
  /** For schemes that sign inside the body (Adyen): the body with its signatures. */
  signedBody?(body: string, secret: string): string;
}

const DEFAULT_BODY =
  '{"id":"evt_1","type":"invoice.paid","data":{"object":{"id":"in_1","amount":42}}}';

export function describeSchemeContract(fixture: SchemeFixture): void {
  const { scheme, secret, otherSecret, nowMs } = fixture;
  const BODY = fixture.body ?? DEFAULT_BODY;
  const signsBody = fixture.signsBody !== false;
  const init = { url: fixture.url ?? "/webhooks/test" };
  /** The body as sent when unchanged: BODY, or BODY with its signatures inside (Adyen). */
  const sentBody = (signWith: string) =>
    fixture.signedBody === undefined ? BODY : fixture.signedBody(BODY, signWith);
  const request = (body?: string, signWith = secret): SignedRequest =>
    signedRequest(body ?? sentBody(signWith), fixture.sign(BODY, signWith), init);
  const verify = (req: SignedRequest, active = secrets(secret)) =>
    scheme.verifier.verify(req, active, nowMs);

  describe(`${scheme.provider}${fixture.label ? ` (${fixture.label})` : ""}: contract`, () => {
    it("accepts a correctly signed request and names the matching secret", () => {
      expect(verify(request()).secretIndex).toBe(0);
    });

    const sent = sentBody(secret);
    const reserialisations = [
      ["pretty-printed", JSON.stringify(JSON.parse(sent), null, 2)],
      ["spaces after commas", sent.replace(/,/g, ", ")],
      ["trailing newline", `${sent}\n`],
    ];

    if (signsBody) {
      it.each(reserialisations)(
        "verifies raw bytes: the same JSON re-serialised (%s) is rejected",
        (_name, reserialised) => {
          expect(reserialised).not.toBe(sent);
          expect(JSON.parse(reserialised)).toEqual(JSON.parse(sent));
          expectRejected(() => verify(request(reserialised)), "HOOKINBOX_SIGNATURE_MISMATCH", 401);
        },
      );
    } else {
      it.each(reserialisations)(
        "signs no raw bytes (documented): the same JSON re-serialised (%s) verifies alike",
        (_name, reserialised) => {
          expect(reserialised).not.toBe(sent);
          expect(verify(request(reserialised)).secretIndex).toBe(0);
        },
      );
    }

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
      expect(
        verify(request(undefined, otherSecret), secrets(secret, otherSecret)).secretIndex,
      ).toBe(1);
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
        () => verify(signedRequest(BODY, {}, init), []),
        "HOOKINBOX_SOURCE_NO_ACTIVE_SECRET",
        503,
      );
    });

    it("never puts the secret, the signature or the body in an error message", () => {
      const headers = fixture.sign(BODY, secret);
      // Schemes that sign the raw bytes see a changed body; the others a wrong secret.
      const error = expectRejected(
        () =>
          signsBody
            ? verify(signedRequest(`${BODY} `, headers, init))
            : verify(request(), secrets(otherSecret)),
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
