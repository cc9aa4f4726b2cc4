/** Postmark: basic-auth credentials in the webhook URL (`https://user:password@host/…`). */

import { field, jsonOrUndefined, scalarText } from "../body.ts";
import type { IdentityContext } from "../types.ts";
import { definePreset, joined } from "./kit.ts";

/**
 * The Postmark dedup key. Postmark sends no event id: `<RecordType>:<ID or MessageID>:<time>`,
 * where the time is the record's own (`DeliveredAt`, `BouncedAt`, `ReceivedAt` of an open or
 * click, `ChangedAt`), so two opens of one message stay two events and a retry stays one.
 *
 * @example
 * ```ts
 * postmarkEventKey(ctx); // "Delivery:883953f4-6105-42a2-a16a-77a8eac79483:2019-11-05T16:33:54.9070259Z"
 * ```
 */
export function postmarkEventKey(context: IdentityContext): string | undefined {
  const body = jsonOrUndefined(context);
  const time = ["DeliveredAt", "BouncedAt", "ReceivedAt", "ChangedAt"]
    .map((name) => scalarText(field(body, name)))
    .find((value) => value !== undefined);
  return joined(
    scalarText(field(body, "RecordType")),
    scalarText(field(body, "ID")) ?? scalarText(field(body, "MessageID")),
    time,
  );
}

/** A Postmark source (basic auth from the webhook URL). @example `postmark({ secrets: [{ env: "POSTMARK_WEBHOOK_AUTH" }] })` */
export const postmark = definePreset("postmark", {
  docs: "#postmark",
  headers: { signature: ["authorization"] },
  verify: { kind: "token", where: { kind: "basic" } },
  identity: Object.freeze({
    id: postmarkEventKey,
    type: "$.RecordType",
    orderingKey: "$.MessageID",
  }),
});
