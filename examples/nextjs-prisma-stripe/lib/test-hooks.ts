// Handlers for the end-to-end test only (test/package/next-serverless.test.ts), mounted when
// HOOKINBOX_EXAMPLE_TEST_HOOKS=1: one that throws after its Prisma write, one that is slow.
import type { Handler, HookinboxConfig } from "hookinbox";
import { creditOnce, type InvoicePaid } from "./credit";

const failsAfterWrite: Handler<InvoicePaid> = async (event, ctx) => {
  const invoice = event.payload.data.object;
  await ctx.transaction(async (tx) => {
    await creditOnce(tx, event.dedupKey, invoice.customer, invoice.amount_paid);
    throw new Error("failing after the write, on purpose");
  });
};

const slow: Handler<InvoicePaid> = async (event, ctx) => {
  const ms = Number(process.env.HOOKINBOX_EXAMPLE_SLOW_MS ?? 1000);
  await new Promise((resolve) => setTimeout(resolve, ms));
  const invoice = event.payload.data.object;
  await ctx.transaction((tx) =>
    creditOnce(tx, event.dedupKey, invoice.customer, invoice.amount_paid),
  );
};

/** The test's handlers, or none. */
export function testHandlers(): NonNullable<HookinboxConfig["handlers"]> {
  if (process.env.HOOKINBOX_EXAMPLE_TEST_HOOKS !== "1") return {};
  return {
    "stripe:test.fails_after_write": {
      handler: failsAfterWrite,
      options: { retry: { schedule: ["1s"], jitter: "none", maxAttempts: 2 } },
    },
    "stripe:test.slow": slow,
  };
}
