import { sign as rsaSign } from "node:crypto";
import { EventEmitter } from "node:events";
import https from "node:https";
import { Readable } from "node:stream";
import MessageValidator from "sns-validator";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { ErrorCode } from "../../src/errors.js";
import type { KeyFetchResponse } from "../../src/providers/keys/index.ts";
import { parseSnsMessage, snsScheme, snsStringToSign } from "../../src/providers/sns.ts";
import { expectRejected, rejection, signedRequest } from "./helpers.js";
import { never, offlineFetcher, selfSignedCertificate } from "./key-fetcher.js";

// The official validator (sns-validator, used by AWS's own samples before the SDK had one) only
// verifies, and fetches the certificate with https.get: the tests serve it our self-signed
// certificate through a stub of https.get, and sign with node:crypto following AWS's documented
// canonical string (written out here, independently of src/providers/sns.ts).

const TOPIC = "arn:aws:sns:us-west-2:123456789012:MyTopic";
const CERT_URL =
  "https://sns.us-west-2.amazonaws.com/SimpleNotificationService-f3ecfb7224c7233fe7bb5f59f96de52f.pem";
const SUBSCRIBE_URL = `https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&TopicArn=${TOPIC}&Token=2336412f37fb687f5d51e6e2425dacbba`;

let certificate: { cert: string; privateKey: string };
let other: { cert: string; privateKey: string };
let expired: { cert: string; privateKey: string };
beforeAll(async () => {
  [certificate, other, expired] = await Promise.all([
    selfSignedCertificate("sns.amazonaws.com"),
    selfSignedCertificate("sns.amazonaws.com"),
    selfSignedCertificate("sns.amazonaws.com", {
      notBefore: new Date(Date.now() - 3 * 86_400_000),
      notAfter: new Date(Date.now() - 86_400_000),
    }),
  ]);
});

type Message = Record<string, string>;

const SIGNED_NOTIFICATION = ["Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"];
const SIGNED_SUBSCRIPTION = [
  "Message",
  "MessageId",
  "SubscribeURL",
  "Timestamp",
  "Token",
  "TopicArn",
  "Type",
];

/** Signs like SNS: RSA-SHA1 (v1) or RSA-SHA256 (v2) over "Name\nvalue\n" of the signed fields. */
function signMessage(
  fields: Message,
  version: "1" | "2" = "2",
  key = certificate.privateKey,
): Message {
  const names = fields.Type === "Notification" ? SIGNED_NOTIFICATION : SIGNED_SUBSCRIPTION;
  const text = names
    .filter((n) => fields[n] !== undefined)
    .map((n) => `${n}\n${fields[n]}\n`)
    .join("");
  const signature = rsaSign(version === "1" ? "sha1" : "sha256", Buffer.from(text), key);
  return {
    ...fields,
    SignatureVersion: version,
    Signature: signature.toString("base64"),
    SigningCertURL: CERT_URL,
  };
}

function notification(overrides: Message = {}): Message {
  return {
    Type: "Notification",
    MessageId: "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324",
    TopicArn: TOPIC,
    Subject: "My First Message",
    Message: "Hello world!",
    Timestamp: new Date().toISOString(),
    UnsubscribeURL: `https://sns.us-west-2.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=${TOPIC}:c9135db0`,
    ...overrides,
  };
}

function confirmation(type = "SubscriptionConfirmation"): Message {
  return {
    Type: type,
    MessageId: "165545c9-2a5c-472c-8df2-7ff2be2b3b1b",
    Token: "2336412f37fb687f5d51e6e2425dacbba",
    TopicArn: TOPIC,
    Message: `You have chosen to subscribe to the topic ${TOPIC}.\nTo confirm the subscription, visit the SubscribeURL included in this message.`,
    SubscribeURL: SUBSCRIBE_URL,
    Timestamp: new Date().toISOString(),
  };
}

const certificates = (request: { url: string }): KeyFetchResponse =>
  request.url === CERT_URL
    ? { status: 200, body: certificate.cert }
    : { status: 404, body: "<Error>NoSuchKey</Error>" };

function setup(
  answer: Parameters<typeof offlineFetcher>[0] = certificates,
  options: { autoConfirm?: boolean; toleranceMs?: number; timeoutMs?: number } = {},
) {
  const offline = offlineFetcher(answer);
  const scheme = snsScheme({
    topicArns: [TOPIC],
    ...(options.autoConfirm === undefined ? {} : { autoConfirm: options.autoConfirm }),
    ...(options.toleranceMs === undefined ? {} : { toleranceMs: options.toleranceMs }),
    keys: { fetcher: offline.fetcher, timeoutMs: options.timeoutMs ?? 2_000 },
  });
  const verify = (body: string | Message, nowMs = Date.now()) =>
    scheme.verifier.verify(
      signedRequest(typeof body === "string" ? body : JSON.stringify(body), {
        "x-amz-sns-message-type": typeof body === "string" ? undefined : body.Type,
      }),
      [],
      nowMs,
    );
  return { ...offline, scheme, verify };
}

/** What sns-validator says, with https.get answering from our certificate store. */
function official(message: Message | string, pem = certificate.cert): Promise<boolean> {
  const get = vi.spyOn(https, "get").mockImplementation(((
    _url: string,
    callback: (response: Readable & { statusCode?: number }) => void,
  ) => {
    const response = Readable.from([pem]) as Readable & { statusCode?: number };
    response.statusCode = 200;
    queueMicrotask(() => callback(response));
    return new EventEmitter();
  }) as unknown as typeof https.get);
  // sns-validator caches certificates by URL for the life of the process: give each call its own.
  const unique = typeof message === "string" ? message : { ...message };
  if (typeof unique !== "string" && unique.SigningCertURL === CERT_URL) {
    unique.SigningCertURL = CERT_URL.replace(".pem", `-${Math.random().toString(36).slice(2)}.pem`);
  }
  return new Promise((resolve) => {
    new MessageValidator().validate(unique, (error: Error | null) => {
      get.mockRestore();
      resolve(error === null);
    });
  });
}

afterEach(() => vi.restoreAllMocks());

describe("sns: agrees with sns-validator", () => {
  it.each<[string, () => Message]>([
    ["a v1 notification (RSA-SHA1)", () => signMessage(notification(), "1")],
    ["a v2 notification (RSA-SHA256)", () => signMessage(notification(), "2")],
    [
      "a notification without Subject",
      () => {
        const { Subject: _, ...rest } = notification();
        return signMessage(rest);
      },
    ],
    ["a SubscriptionConfirmation", () => signMessage(confirmation())],
    [
      "a JSON message with unicode and newlines",
      () => signMessage(notification({ Message: '{"order":"Zoë 🎉","lines":"a\\nb"}\nend' })),
    ],
  ])("%s: both accept", async (_name, build) => {
    const message = build();
    const { verify, urls } = setup();
    expect(await official(message)).toBe(true);
    expect(await verify(message)).toEqual({ secretIndex: null });
    expect(urls()).toEqual([CERT_URL]);
  });

  it.each(["Message", "MessageId", "Subject", "Timestamp"])(
    "a notification with %s changed: both reject",
    async (name) => {
      const message = signMessage(notification());
      const changed = { ...message, [name]: `${message[name]}x` };
      expect(await official(changed)).toBe(false);
      await expect(setup().verify(changed)).rejects.toMatchObject({
        code: "HOOKINBOX_SIGNATURE_MISMATCH",
        status: 401,
      });
    },
  );

  it.each(["Token", "SubscribeURL", "Message"])(
    "a SubscriptionConfirmation with %s changed: both reject",
    async (name) => {
      const message = signMessage(confirmation());
      const changed = { ...message, [name]: `${message[name]}0` };
      expect(await official(changed)).toBe(false);
      await expect(setup().verify(changed)).rejects.toMatchObject({
        code: "HOOKINBOX_SIGNATURE_MISMATCH",
      });
    },
  );

  it("UnsubscribeConfirmation: AWS documents Token as signed; sns-validator 0.3.5 leaves it out", async () => {
    // AWS's signature page lists Message, MessageId, SubscribeURL, Timestamp, Token, TopicArn and
    // Type for both confirmation types; sns-validator signs UnsubscribeConfirmation like a
    // Notification (no Token). hookinbox follows AWS; this test pins the difference.
    const asAwsDocuments = signMessage(confirmation("UnsubscribeConfirmation"));
    expect(await setup().verify(asAwsDocuments)).toEqual({ secretIndex: null });
    expect(await official(asAwsDocuments)).toBe(false);
    const fields = confirmation("UnsubscribeConfirmation");
    const { Token: _, ...withoutToken } = fields;
    const names = ["Message", "MessageId", "SubscribeURL", "Timestamp", "TopicArn", "Type"];
    const text = names.map((n) => `${n}\n${withoutToken[n]}\n`).join("");
    const asValidator = {
      ...fields,
      SignatureVersion: "2",
      Signature: rsaSign("sha256", Buffer.from(text), certificate.privateKey).toString("base64"),
      SigningCertURL: CERT_URL,
    };
    expect(await official(asValidator)).toBe(true);
    await expect(setup().verify(asValidator)).rejects.toMatchObject({
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
    });
  });

  it("UnsubscribeURL is not signed (documented): both accept it changed", async () => {
    const message = signMessage(notification());
    const changed = { ...message, UnsubscribeURL: `${message.UnsubscribeURL}&x=1` };
    expect(await official(changed)).toBe(true);
    expect(await setup().verify(changed)).toEqual({ secretIndex: null });
  });

  it("a v1 signature labelled v2 (and the reverse): both reject", async () => {
    for (const [signedAs, labelled] of [
      ["1", "2"],
      ["2", "1"],
    ] as const) {
      const message = { ...signMessage(notification(), signedAs), SignatureVersion: labelled };
      expect(await official(message)).toBe(false);
      await expect(setup().verify(message)).rejects.toMatchObject({
        code: "HOOKINBOX_SIGNATURE_MISMATCH",
      });
    }
  });

  it("a signature by another certificate's key: both reject", async () => {
    const message = signMessage(notification(), "2", other.privateKey);
    expect(await official(message)).toBe(false);
    await expect(setup().verify(message)).rejects.toMatchObject({
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
    });
  });

  it("the canonical string is AWS's: fields in order, Name\\nvalue\\n each", () => {
    const message = parseSnsMessage(
      new TextEncoder().encode(JSON.stringify(signMessage(notification({ Timestamp: "T" })))),
    );
    expect(snsStringToSign(message)).toBe(
      `Message\nHello world!\nMessageId\n22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324\nSubject\nMy First Message\nTimestamp\nT\nTopicArn\n${TOPIC}\nType\nNotification\n`,
    );
  });
});

describe("sns: one code per defect", () => {
  const cases: Array<[string, () => string | Message, ErrorCode, number]> = [
    ["a body that is not JSON", () => "Type=Notification", "HOOKINBOX_BODY_INVALID_JSON", 400],
    ["a JSON array", () => "[]", "HOOKINBOX_BODY_INVALID_JSON", 400],
    [
      "no Signature",
      () => {
        const { Signature: _, ...rest } = signMessage(notification());
        return rest;
      },
      "HOOKINBOX_SIGNATURE_MISSING",
      400,
    ],
    [
      "an unknown Type",
      () => ({ ...signMessage(notification()), Type: "Other" }),
      "HOOKINBOX_SIGNATURE_MALFORMED",
      400,
    ],
    [
      "no MessageId",
      () => {
        const { MessageId: _, ...rest } = signMessage(notification());
        return rest;
      },
      "HOOKINBOX_SIGNATURE_MALFORMED",
      400,
    ],
    [
      "a SubscriptionConfirmation without Token",
      () => {
        const { Token: _, ...rest } = signMessage(confirmation());
        return rest;
      },
      "HOOKINBOX_SIGNATURE_MALFORMED",
      400,
    ],
    [
      "no SigningCertURL",
      () => {
        const { SigningCertURL: _, ...rest } = signMessage(notification());
        return rest;
      },
      "HOOKINBOX_SIGNATURE_MALFORMED",
      400,
    ],
    [
      "SignatureVersion 3",
      () => ({ ...signMessage(notification()), SignatureVersion: "3" }),
      "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      400,
    ],
    [
      "another account's topic (signed by AWS all the same)",
      () => signMessage(notification({ TopicArn: "arn:aws:sns:us-west-2:999999999999:MyTopic" })),
      "HOOKINBOX_SENDER_NOT_ALLOWED",
      403,
    ],
    [
      "a signature that is not base64",
      () => ({ ...signMessage(notification()), Signature: "not base64!" }),
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    ],
  ];
  it.each(cases)("%s → %s, and nothing is fetched", async (_name, build, code, status) => {
    const { verify, calls } = setup();
    const error = await verify(build()).catch((e: unknown) => e);
    expect(
      rejection(() => {
        throw error;
      }),
    ).toMatchObject({ code, status });
    if (code !== "HOOKINBOX_SIGNATURE_MISMATCH") expect(calls).toHaveLength(0);
  });

  it.each([
    ["http instead of https", CERT_URL.replace("https:", "http:")],
    ["a host that is not SNS", "https://evil.example/SimpleNotificationService-x.pem"],
    [
      "SNS's name as a subdomain",
      "https://sns.us-west-2.amazonaws.com.evil.example/SimpleNotificationService-x.pem",
    ],
    [
      "userinfo that hides the host",
      "https://sns.us-west-2.amazonaws.com@evil.example/SimpleNotificationService-x.pem",
    ],
    ["another port", "https://sns.us-west-2.amazonaws.com:8443/SimpleNotificationService-x.pem"],
    ["a path that is not a certificate", "https://sns.us-west-2.amazonaws.com/?Action=Publish"],
    ["an S3 host", "https://s3.amazonaws.com/SimpleNotificationService-x.pem"],
    ["not a URL", "sns.us-west-2.amazonaws.com/x.pem"],
  ])("a SigningCertURL with %s is refused without any network call", async (_name, url) => {
    const { verify, calls } = setup();
    await expect(
      verify({ ...signMessage(notification()), SigningCertURL: url }),
    ).rejects.toMatchObject({
      code: "HOOKINBOX_KEY_URL_NOT_ALLOWED",
      status: 400,
    });
    expect(calls).toHaveLength(0);
  });

  it("accepts certificate URLs of every region shape, including China and GovCloud", async () => {
    for (const host of [
      "sns.eu-central-2.amazonaws.com",
      "sns.cn-north-1.amazonaws.com.cn",
      "sns.us-gov-west-1.amazonaws.com",
      "sns.ap-southeast-4.amazonaws.com",
    ]) {
      const url = `https://${host}/SimpleNotificationService-01d088a6f77103d0fe307c0069e40ed6.pem`;
      const { verify, urls } = setup(() => ({ status: 200, body: certificate.cert }));
      const message = { ...signMessage(notification()), SigningCertURL: url };
      expect(await verify(message)).toEqual({ secretIndex: null });
      expect(urls()).toEqual([url]);
    }
  });

  it.each<[string, Parameters<typeof offlineFetcher>[0], ErrorCode, number]>([
    [
      "the certificate host answers 500",
      () => ({ status: 500, body: "" }),
      "HOOKINBOX_KEY_UNAVAILABLE",
      503,
    ],
    [
      "the certificate host answers 429",
      () => ({ status: 429, body: "" }),
      "HOOKINBOX_KEY_UNAVAILABLE",
      503,
    ],
    [
      "the network fails",
      () => Promise.reject(new Error("ECONNRESET")),
      "HOOKINBOX_KEY_UNAVAILABLE",
      503,
    ],
    ["the host hangs past the timeout", never, "HOOKINBOX_KEY_UNAVAILABLE", 503],
    [
      "the host sends no certificate",
      () => ({ status: 200, body: "<html>" }),
      "HOOKINBOX_KEY_UNAVAILABLE",
      503,
    ],
    [
      "the host has no such certificate (404)",
      () => ({ status: 404, body: "" }),
      "HOOKINBOX_KEY_UNKNOWN",
      401,
    ],
  ])("%s → %s %s", async (_name, answer, code, status) => {
    const { verify, calls } = setup(answer, { timeoutMs: 50 });
    await expect(verify(signMessage(notification()))).rejects.toMatchObject({ code, status });
    expect(calls).toHaveLength(1);
  });

  it("an expired certificate → HOOKINBOX_KEY_UNKNOWN", async () => {
    const { verify } = setup(() => ({ status: 200, body: expired.cert }));
    await expect(
      verify(signMessage(notification(), "2", expired.privateKey)),
    ).rejects.toMatchObject({
      code: "HOOKINBOX_KEY_UNKNOWN",
      status: 401,
    });
  });

  it("with a window, checks the signed Timestamp after the signature", async () => {
    const { verify } = setup(certificates, { toleranceMs: 60_000 });
    const now = Date.parse("2026-11-30T12:00:00.000Z");
    const message = signMessage(notification({ Timestamp: "2026-11-30T12:00:00.000Z" }));
    expect(await verify(message, now + 60_000)).toEqual({ secretIndex: null, signedAt: now });
    await expect(verify(message, now + 60_001)).rejects.toMatchObject({
      code: "HOOKINBOX_TIMESTAMP_TOO_OLD",
    });
    await expect(verify(message, now - 60_001)).rejects.toMatchObject({
      code: "HOOKINBOX_TIMESTAMP_IN_FUTURE",
    });
    await expect(
      verify(signMessage(notification({ Timestamp: "yesterday" })), now),
    ).rejects.toMatchObject({
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
    });
  });

  it("has no window by default (SNS retries the same signed message)", async () => {
    const message = signMessage(notification({ Timestamp: "2020-01-01T00:00:00.000Z" }));
    expect(await setup().verify(message)).toEqual({ secretIndex: null });
  });

  it("never puts the signature or the body in an error message", async () => {
    const message = signMessage(notification({ Message: "secret-order-4242" }));
    const error = await setup()
      .verify({ ...message, Message: "secret-order-4243" })
      .catch((e: Error) => e);
    expect((error as Error).message).not.toContain("secret-order");
    expect((error as Error).message).not.toContain(message.Signature?.slice(0, 20));
  });
});

describe("sns: certificate cache", () => {
  it("fetches a certificate once for many messages, and once for concurrent ones", async () => {
    const { verify, calls } = setup();
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        verify(signMessage(notification({ MessageId: `m-${i}` }))),
      ),
    );
    await verify(signMessage(notification({ MessageId: "later" })));
    expect(calls).toHaveLength(1);
  });

  it("a failed fetch is not cached: the provider's retry fetches again", async () => {
    let fail = true;
    const { verify, calls } = setup((request) =>
      fail ? { status: 503, body: "" } : certificates(request),
    );
    const message = signMessage(notification());
    await expect(verify(message)).rejects.toMatchObject({ code: "HOOKINBOX_KEY_UNAVAILABLE" });
    fail = false;
    expect(await verify(message)).toEqual({ secretIndex: null });
    expect(calls).toHaveLength(2);
  });

  it("a certificate the host does not have is remembered, not refetched per request", async () => {
    const { verify, calls } = setup(() => ({ status: 404, body: "" }));
    for (let i = 0; i < 5; i++) {
      await expect(verify(signMessage(notification()))).rejects.toMatchObject({
        code: "HOOKINBOX_KEY_UNKNOWN",
      });
    }
    expect(calls).toHaveLength(1);
  });
});

describe("sns: SubscriptionConfirmation", () => {
  const request = (message: Message) => signedRequest(JSON.stringify(message), {});

  it("without autoConfirm, confirms nothing (the message is stored for an operator)", () => {
    const { scheme } = setup();
    expect(scheme.confirmSubscription?.(request(signMessage(confirmation())))).toBeUndefined();
  });

  it("with autoConfirm, fetches SubscribeURL once", async () => {
    const { scheme, urls } = setup(
      () => ({ status: 200, body: "<ConfirmSubscriptionResponse/>" }),
      {
        autoConfirm: true,
      },
    );
    await scheme.confirmSubscription?.(request(signMessage(confirmation())));
    expect(urls()).toEqual([SUBSCRIBE_URL]);
    expect(scheme.confirmSubscription?.(request(signMessage(notification())))).toBeUndefined();
  });

  it("with autoConfirm, a SubscribeURL off SNS's hosts is refused without any call", async () => {
    const { scheme, calls } = setup(undefined, { autoConfirm: true });
    const message = { ...signMessage(confirmation()), SubscribeURL: "https://169.254.169.254/?x" };
    await expect(scheme.confirmSubscription?.(request(message))).rejects.toMatchObject({
      code: "HOOKINBOX_KEY_URL_NOT_ALLOWED",
    });
    expect(calls).toHaveLength(0);
  });

  it.each<[string, Parameters<typeof offlineFetcher>[0]]>([
    ["SNS answers 500", () => ({ status: 500, body: "" })],
    ["SNS answers 403", () => ({ status: 403, body: "" })],
    ["the network fails", () => Promise.reject(new Error("ECONNREFUSED"))],
  ])("with autoConfirm, %s → HOOKINBOX_SUBSCRIPTION_CONFIRM_FAILED (503)", async (_n, answer) => {
    const { scheme } = setup(answer, { autoConfirm: true });
    await expect(
      scheme.confirmSubscription?.(request(signMessage(confirmation()))),
    ).rejects.toMatchObject({ code: "HOOKINBOX_SUBSCRIPTION_CONFIRM_FAILED", status: 503 });
  });
});

it("expectRejected helper stays usable for sync parsing", () => {
  expectRejected(
    () => parseSnsMessage(new TextEncoder().encode("{")),
    "HOOKINBOX_BODY_INVALID_JSON",
    400,
  );
});
