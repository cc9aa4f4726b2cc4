// Recipe (b): send an email behind `ctx.effect` with `onStale: "reclaim"`.
//
// The email is a side effect outside the database: no transaction can take it back. The effect
// ledger claims (this event, this handler, "welcome-email") before sending and records it as
// done after, so a retry, a duplicate or a replay of the event never sends it twice. If the
// worker dies between the claim and the record, nobody knows whether the email left: `reclaim`
// sends it again once the claim is older than `staleAfter` (a possible duplicate welcome email
// beats a missing one). Pass the idempotency key along too: mail APIs that accept one drop that
// duplicate.
//
// Run it: CLERK_WEBHOOK_SECRET=whsec_… npx hookinbox start --config examples/recipes/welcome-email.ts
// (set MAIL_API_URL and MAIL_API_KEY to send for real; without them it prints what it would send)
import { defineConfig, type Handler, type HookinboxConfig } from "hookinbox";

/** A Clerk `user.created` event (Standard Webhooks), the fields this recipe reads. */
export interface UserCreatedEvent {
  readonly type: "user.created";
  readonly data: {
    readonly id: string;
    readonly first_name: string | null;
    readonly email_addresses: ReadonlyArray<{ readonly email_address: string }>;
  };
}

/** What the recipe needs from a mail provider. */
export interface Mailer {
  send(message: {
    to: string;
    subject: string;
    text: string;
    idempotencyKey: string;
  }): Promise<{ messageId: string }>;
}

/** A mailer over a JSON HTTP API that takes an `Idempotency-Key` header (most do). */
export function httpMailer(url: string, apiKey: string): Mailer {
  return {
    async send({ idempotencyKey, ...message }) {
      const response = await fetch(url, {
        method: "POST",
        headers: {
          authorization: `Bearer ${apiKey}`,
          "content-type": "application/json",
          "idempotency-key": idempotencyKey,
        },
        body: JSON.stringify(message),
      });
      if (!response.ok) throw new Error(`mail API answered ${response.status}`);
      return (await response.json()) as { messageId: string };
    },
  };
}

/** Without a mail API configured: print what would be sent (to try the recipe locally). */
export const printingMailer: Mailer = {
  async send(message) {
    console.error(
      `would send "${message.subject}" to ${message.to} (key ${message.idempotencyKey})`,
    );
    return { messageId: `printed-${message.idempotencyKey}` };
  },
};

/** The welcome-email handler over a mailer; `staleAfter` must exceed the mail API's p99. */
export function welcomeEmailHandlers(mailer: Mailer, options: { staleAfter?: string } = {}) {
  const sendWelcome: Handler<UserCreatedEvent> = async (event, ctx) => {
    const user = event.payload.data;
    const to = user.email_addresses[0]?.email_address;
    if (!to) return; // nothing to send to: done
    await ctx.effect(
      "welcome-email",
      () =>
        mailer.send({
          to,
          subject: "Welcome!",
          text: `Hello ${user.first_name ?? "there"}, welcome aboard.`,
          idempotencyKey: ctx.idempotencyKey("welcome-email"),
        }),
      { onStale: "reclaim", staleAfter: options.staleAfter ?? "2m" },
    );
  };
  return { "clerk:user.created": sendWelcome } satisfies HookinboxConfig["handlers"];
}

export default defineConfig({
  store: "sqlite:./.hookinbox/hookinbox.db",
  sources: {
    clerk: { provider: "standard-webhooks", secrets: [{ env: "CLERK_WEBHOOK_SECRET" }] },
  },
  handlers: welcomeEmailHandlers(
    process.env.MAIL_API_URL
      ? httpMailer(process.env.MAIL_API_URL, process.env.MAIL_API_KEY ?? "")
      : printingMailer,
  ),
});
