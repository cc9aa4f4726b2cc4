// Payload: a Paddle Billing `transaction.completed` notification as in Paddle's webhook docs
// (developer.paddle.com/webhooks/transactions/transaction-completed), trimmed.
import { mac, randomToken, seconds } from "./sign.ts";
import type { ProviderSample } from "./types.ts";

/**
 * Paddle Billing: `Paddle-Signature: ts=<s>;h1=<hex HMAC-SHA256 of "{ts}:{body}">`; the dedup
 * key is `event_id` (`notification_id` changes on replays).
 *
 * @example
 * ```ts
 * paddleSample.build({ secret: "pdl_ntfset_…", url, nowMs: Date.now(), id: paddleSample.newId() });
 * ```
 */
export const paddleSample: ProviderSample = {
  provider: "paddle",
  origin: "developer.paddle.com transaction.completed webhook example, trimmed",
  defaultType: "transaction.completed",
  unhandledType: "report.updated",
  exampleSecret: "pdl_ntfset_01hv8x29kjbt1yxh0fq3cz44pa_hookinbox",
  traits: () => ({ signs: "body", timestampWindowMs: 5_000, bodyFormat: "json" }),
  newId: () => `evt_01${randomToken(24, "abcdefghjkmnpqrstvwxyz0123456789")}`,
  build(input) {
    const ts = seconds(input.nowMs);
    const type = input.type ?? this.defaultType;
    const occurred = new Date(
      input.sequence === undefined ? input.nowMs : input.sequence * 1000,
    ).toISOString();
    const body =
      input.body ??
      JSON.stringify({
        event_id: input.id,
        event_type: type,
        occurred_at: occurred,
        notification_id: `ntf_01${randomToken(24, "abcdefghjkmnpqrstvwxyz0123456789")}`,
        data: {
          id: input.resource ?? "txn_01hv8wptq8987qeep44cyrewp9",
          status: "completed",
          customer_id: "ctm_01hv6y1jedq4p1n0yqn5ba3ky4",
          currency_code: "USD",
          updated_at: occurred,
          details: { totals: { subtotal: "2400", tax: "0", total: "2400" } },
        },
      });
    return {
      url: input.url,
      headers: {
        "content-type": "application/json",
        "paddle-signature": `ts=${ts};h1=${mac("sha256", input.secret, `${ts}:${body}`, "hex")}`,
      },
      body,
      eventId: input.body === undefined ? input.id : undefined,
      type,
      version: occurred,
    };
  },
};
