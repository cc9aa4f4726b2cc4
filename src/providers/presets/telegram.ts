/** Telegram Bot API: `setWebhook`'s `secret_token` comes back in a header, unsigned. */

import { field, jsonOrUndefined, path, scalarText } from "../body.ts";
import type { IdentityContext } from "../types.ts";
import { definePreset } from "./kit.ts";

/**
 * The Telegram update type: the one field of an Update besides `update_id` (`message`,
 * `edited_message`, `callback_query`, …).
 *
 * @example
 * ```ts
 * telegramUpdateType(ctx); // "message"
 * ```
 */
export function telegramUpdateType(context: IdentityContext): string | undefined {
  const update = jsonOrUndefined(context);
  if (typeof update !== "object" || update === null) return undefined;
  return Object.keys(update).find((key) => key !== "update_id");
}

/**
 * The Telegram ordering key: the chat the update belongs to (`<kind>.chat.id`, or a callback
 * query's message chat), else the user it comes from.
 *
 * @example
 * ```ts
 * telegramChat(ctx); // "1111111"
 * ```
 */
export function telegramChat(context: IdentityContext): string | undefined {
  const kind = telegramUpdateType(context);
  if (kind === undefined) return undefined;
  const inner = field(jsonOrUndefined(context), kind);
  return (
    scalarText(path(inner, "chat", "id")) ??
    scalarText(path(inner, "message", "chat", "id")) ??
    scalarText(path(inner, "from", "id"))
  );
}

/** A Telegram bot source (`X-Telegram-Bot-Api-Secret-Token`). @example `telegram({ secrets: [{ env: "TELEGRAM_SECRET_TOKEN" }] })` */
export const telegram = definePreset("telegram", {
  docs: "#telegram-bot-api",
  headers: { signature: ["x-telegram-bot-api-secret-token"] },
  verify: { kind: "token", where: { kind: "header", name: "x-telegram-bot-api-secret-token" } },
  identity: Object.freeze({
    id: "$.update_id",
    type: telegramUpdateType,
    orderingKey: telegramChat,
  }),
});
