// Pre-signed Stripe requests for the ingest bench. Signing happens here, before a phase starts,
// never in a load generator: an HMAC plus a fresh JSON body per request in autocannon's
// setupRequest capped the client near 15–20k req/s.
//
// File format (read by replay.lua, paced-client.ts and autocannon-client.ts):
//   line 1: body prefix, line 2: body suffix, then one `signature<TAB>id` line per request,
//   where body = prefix + id + suffix. Storing the id rather than the 2 KB body keeps a
//   350k-request slice at ~40 MB instead of ~800 MB (LuaJIT must hold it in memory).
import { createHmac } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";

export const STRIPE_SECRET = "whsec_hookinbox_bench_secret";

/** A ~2 KB `invoice.paid` event shaped like Stripe's, split around its `id`. */
export function bodyTemplate(createdSeconds: number): { prefix: string; suffix: string } {
  const invoice = {
    id: "in_1PbenchInvoice0000000001",
    object: "invoice",
    account_country: "US",
    account_name: "hookinbox bench",
    amount_due: 4200,
    amount_paid: 4200,
    amount_remaining: 0,
    billing_reason: "subscription_cycle",
    collection_method: "charge_automatically",
    currency: "usd",
    customer: "cus_QbenchCustomer01",
    customer_email: "bench@example.com",
    hosted_invoice_url: "https://invoice.stripe.com/i/acct_bench/test_bench",
    lines: {
      object: "list",
      data: [
        {
          id: "il_1PbenchLine000000001",
          object: "line_item",
          amount: 4200,
          currency: "usd",
          description: "1 × hookinbox Pro (at $42.00 / month)",
          period: { end: createdSeconds + 2_592_000, start: createdSeconds },
          price: {
            id: "price_1Pbench",
            object: "price",
            product: "prod_Qbench",
            unit_amount: 4200,
          },
          quantity: 1,
          type: "subscription",
        },
      ],
      has_more: false,
      total_count: 1,
    },
    metadata: { plan: "pro", note: "x".repeat(870) },
    number: "BENCH-0001",
    paid: true,
    status: "paid",
    subscription: "sub_1PbenchSub0001",
    total: 4200,
  };
  const rest = {
    object: "event",
    api_version: "2024-06-20",
    created: createdSeconds,
    data: { object: invoice },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: "invoice.paid",
  };
  const marker = "__ID__";
  const json = JSON.stringify({ id: marker, ...rest });
  const at = json.indexOf(marker);
  return { prefix: json.slice(0, at), suffix: json.slice(at + marker.length) };
}

/**
 * Signs `ids` (in send order; repeats allowed) exactly as Stripe does —
 * `t=<ts>,v1=<hex HMAC-SHA256 of "<ts>.<body>", key = the whsec_ string as UTF-8>` — and
 * writes them to `file`. Returns the body size in bytes.
 */
export function writeSignedSlice(file: string, ids: readonly string[]): number {
  const ts = Math.floor(Date.now() / 1000);
  const { prefix, suffix } = bodyTemplate(ts);
  const signed = new Map<string, string>();
  const lines = [prefix, suffix];
  for (const id of ids) {
    let signature = signed.get(id);
    if (signature === undefined) {
      const mac = createHmac("sha256", STRIPE_SECRET).update(`${ts}.${prefix}${id}${suffix}`);
      signature = `t=${ts},v1=${mac.digest("hex")}`;
      signed.set(id, signature);
    }
    lines.push(`${signature}\t${id}`);
  }
  writeFileSync(file, `${lines.join("\n")}\n`);
  return Buffer.byteLength(`${prefix}${ids[0] ?? ""}${suffix}`);
}

/**
 * `count` request ids for one phase. With `duplicates`, ids come in blocks of 256 that are
 * sent twice in a row (a, b, …, a, b, …), so half the deliveries are duplicates and each
 * duplicate arrives a few ms after its original, usually in a different group commit.
 */
export function phaseIds(tag: string, count: number, duplicates: boolean): string[] {
  const ids: string[] = [];
  const block = 256;
  for (let start = 0; ids.length < count; start += block) {
    const unique = Array.from({ length: block }, (_, k) => `evt_${tag}_${start + k}`);
    ids.push(...unique);
    if (duplicates) ids.push(...unique);
  }
  return ids.slice(0, count);
}

/** The raw HTTP/1.1 requests of a slice file, as Buffers (same bytes replay.lua sends). */
export function readRequests(file: string, host: string, path: string): Buffer[] {
  const [prefix = "", suffix = "", ...lines] = readFileSync(file, "utf8").split("\n");
  return lines
    .filter((line) => line.length > 0)
    .map((line) => {
      const [signature, id] = line.split("\t");
      const body = `${prefix}${id}${suffix}`;
      return Buffer.from(
        `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Stripe-Signature: ${signature}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    });
}
