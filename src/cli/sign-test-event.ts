import { createHmac, randomUUID } from "node:crypto";
import type { ResolvedSource } from "../config/index.ts";
import { hookinboxError } from "../errors.ts";

/** A signed test request for `hookinbox send`. */
export interface TestRequest {
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly id: string;
}

/**
 * Builds and signs a test event for a source with its first secret (Stripe, GitHub, Standard
 * Webhooks), with `eventId` as the provider's event id when given (else a new one). Tests use the providers' own packages as signers instead; this is for humans.
 *
 * @example
 * ```ts
 * const { headers, body } = signTestEvent(source, Date.now(), "demo.ping");
 * ```
 */
export function signTestEvent(
  source: ResolvedSource,
  nowMs: number,
  type: string,
  eventId?: string,
): TestRequest {
  const secret = source.secrets[0]?.value ?? "";
  const seconds = Math.floor(nowMs / 1000);
  const id = eventId ?? randomUUID();
  switch (source.provider) {
    case "standard-webhooks": {
      const msgId = eventId ?? `msg_${id.replaceAll("-", "")}`;
      const body = JSON.stringify({
        type,
        timestamp: new Date(nowMs).toISOString(),
        data: { hello: "world" },
      });
      const key = Buffer.from(secret.startsWith("whsec_") ? secret.slice(6) : secret, "base64");
      const signature = createHmac("sha256", key)
        .update(`${msgId}.${seconds}.${body}`)
        .digest("base64");
      return {
        id: msgId,
        body,
        headers: {
          "content-type": "application/json",
          "webhook-id": msgId,
          "webhook-timestamp": String(seconds),
          "webhook-signature": `v1,${signature}`,
        },
      };
    }
    case "stripe": {
      const evtId = eventId ?? `evt_test_${id.replaceAll("-", "").slice(0, 24)}`;
      const body = JSON.stringify({
        id: evtId,
        object: "event",
        type,
        created: seconds,
        data: { object: { id: "cus_test" } },
      });
      const signature = createHmac("sha256", secret).update(`${seconds}.${body}`).digest("hex");
      return {
        id: evtId,
        body,
        headers: {
          "content-type": "application/json",
          "stripe-signature": `t=${seconds},v1=${signature}`,
        },
      };
    }
    case "github": {
      const body = JSON.stringify({ zen: "Keep it logically awesome.", hook_id: 1 });
      const signature = createHmac("sha256", secret).update(body).digest("hex");
      return {
        id,
        body,
        headers: {
          "content-type": "application/json",
          "x-github-delivery": id,
          "x-github-event": type,
          "x-hub-signature-256": `sha256=${signature}`,
        },
      };
    }
    default:
      throw hookinboxError(
        "HOOKINBOX_USAGE",
        `hookinbox send signs for stripe, github and standard-webhooks sources, not "${source.provider}"; send a test from the provider's dashboard`,
      );
  }
}
