// The inbox: Stripe events stored in PostgreSQL (schema "hookinbox", beside Prisma's tables in
// "public"), processed right after each response and by the cron route.
import { createInbox, type Inbox } from "hookinbox";
import { invoicePaid } from "./credit";
import { testHandlers } from "./test-hooks";

const globals = globalThis as { inbox?: Inbox };

/**
 * The inbox, created on first use (not while `next build` loads the routes), once per server
 * process. Its lease (WEBHOOK_LEASE, default 2m) must exceed the routes' maxDuration (60 s),
 * so a delivery is never taken over while the invocation running it may still be alive.
 */
export function inbox(): Inbox {
  globals.inbox ??= createInbox({
    store: process.env.DATABASE_URL,
    sources: { stripe: { provider: "stripe", secrets: [{ env: "STRIPE_WEBHOOK_SECRET" }] } },
    worker: { lease: process.env.WEBHOOK_LEASE ?? "2m" },
    handlers: { "stripe:invoice.paid": invoicePaid, ...testHandlers() },
  });
  return globals.inbox;
}
