// The handler: a paid invoice credits the customer's balance, with Prisma, in the transaction
// that marks the delivery done. Both commit or neither: a crash or a throw leaves no credit, and
// the retry credits once.
import type { Handler, TransactionClient } from "hookinbox";
import { withPrisma } from "hookinbox/prisma";
import { prisma } from "./prisma";

/** The part of a Stripe `invoice.paid` event the handler reads. */
export type InvoicePaid = {
  data: { object: { customer: string; amount_paid: number } };
};

/**
 * Credits `amount` to `customer` once per Stripe event (its id is the credit's key), with Prisma
 * inside hookinbox's transaction `tx`.
 */
export function creditOnce(
  tx: TransactionClient,
  eventId: string,
  customer: string,
  amount: number,
): Promise<void> {
  return withPrisma(prisma, tx, async (db) => {
    // Recorded to show where the credit was written: the delivery's own transaction.
    const [row] = await db.$queryRaw<Array<{ txid: bigint }>>`SELECT txid_current() AS txid`;
    // skipDuplicates: a replay of the event credits nothing more.
    const { count } = await db.credit.createMany({
      data: [{ eventId, customer, amount, txid: row!.txid }],
      skipDuplicates: true,
    });
    if (count === 0) return;
    await db.balance.upsert({
      where: { customer },
      create: { customer, amount },
      update: { amount: { increment: amount } },
    });
  });
}

/** `stripe:invoice.paid`. */
export const invoicePaid: Handler<InvoicePaid> = async (event, ctx) => {
  const invoice = event.payload.data.object;
  await ctx.transaction((tx) =>
    creditOnce(tx, event.dedupKey, invoice.customer, invoice.amount_paid),
  );
};
