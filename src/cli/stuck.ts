import { parseArgs } from "node:util";
import { oneLine, parseDurationOption, parseLimitOption } from "./cli-args.ts";
import { type CliContext, openConfiguredStore } from "./context.ts";
import { renderTable } from "./table.ts";

/**
 * `hookinbox stuck [--older-than 1h] [--limit N] [--json]`: what needs a human: deliveries whose
 * lease expired with no worker to rescue them, handlers abandoned after their timeout, ordering
 * keys blocked by a dead delivery, effects held for a human, and events older than
 * the threshold that are still not done (pending or dead). Exits 0 when nothing is stuck and 1
 * when something is, so it can run from cron or a monitoring check as it is.
 *
 * @example
 * ```ts
 * const code = await stuckCommand(ctx, ["--older-than", "30m"]); // 0 | 1
 * ```
 */
export async function stuckCommand(ctx: CliContext, args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      config: { type: "string", short: "c" },
      "older-than": { type: "string" },
      limit: { type: "string" },
      json: { type: "boolean" },
    },
  });
  const olderThan = values["older-than"] ?? "1h";
  const olderThanMs = parseDurationOption("--older-than", olderThan);
  const limit = parseLimitOption(values.limit) ?? 50;
  const store = await openConfiguredStore(ctx, values.config);
  try {
    const report = await store.stuck({ now: Date.now(), olderThanMs, limit });
    const stuck =
      report.expiredLeases.length +
        report.abandoned.length +
        report.blockedKeys.length +
        report.heldEffects.length +
        report.oldUndone.length >
      0;
    if (values.json) {
      ctx.stdout.write(`${JSON.stringify({ stuck, ...report })}\n`);
      return stuck ? 1 : 0;
    }
    if (!stuck) {
      ctx.stdout.write(
        `nothing is stuck: no expired leases, no abandoned handlers, no blocked ordering keys, no effects held, no event older than ${olderThan} left undone\n`,
      );
      return 0;
    }
    const sections: string[] = [];
    if (report.expiredLeases.length > 0) {
      sections.push(
        `expired leases (${report.expiredLeases.length}): their worker stopped; a running worker rescues them`,
        renderTable(
          ["DELIVERY", "EVENT", "TARGET", "LEASE OWNER", "LEASE EXPIRED AT", "ATTEMPTS"],
          report.expiredLeases.map((d) => [
            d.id,
            d.eventId,
            d.target,
            d.leaseOwner ?? "-",
            d.leaseExpiresAt ?? "-",
            String(d.attempts),
          ]),
        ),
      );
    }
    if (report.abandoned.length > 0) {
      sections.push(
        `abandoned handlers (${report.abandoned.length}): they ignored their timeout's abort; their lease expires, then the delivery is retried`,
        renderTable(
          ["DELIVERY", "EVENT", "TARGET", "LEASE OWNER", "LEASE EXPIRES AT", "ERROR"],
          report.abandoned.map((d) => [
            d.id,
            d.eventId,
            d.target,
            d.leaseOwner ?? "-",
            d.leaseExpiresAt ?? "-",
            oneLine(d.lastError, 80),
          ]),
        ),
      );
    }
    if (report.blockedKeys.length > 0) {
      sections.push(
        `ordering keys blocked by a dead delivery (${report.blockedKeys.length}): fix the cause, then \`hookinbox retry <delivery>\` releases what waits`,
        renderTable(
          ["DEAD DELIVERY", "EVENT", "TARGET", "ORDERING KEY", "PARKED", "LAST ERROR"],
          report.blockedKeys.map((k) => [
            k.deliveryId,
            k.eventId,
            k.target,
            oneLine(k.orderingKey, 40),
            String(k.parked),
            oneLine(k.lastError, 60),
          ]),
        ),
      );
    }
    if (report.heldEffects.length > 0) {
      sections.push(
        `effects held for a human (${report.heldEffects.length}): check whether each happened, then \`hookinbox effects resolve <id> --done|--release\``,
        renderTable(
          ["EFFECT", "EVENT", "TARGET", "NAME", "CLAIMS", "CLAIMED AT"],
          report.heldEffects.map((e) => [
            e.id,
            e.eventId,
            e.target,
            e.name,
            String(e.claims),
            e.claimedAt ?? "-",
          ]),
        ),
      );
    }
    if (report.oldUndone.length > 0) {
      sections.push(
        `events older than ${olderThan} not done (${report.oldUndone.length}): see \`hookinbox events show <id>\` and \`hookinbox dlq list\``,
        renderTable(
          ["EVENT", "SOURCE", "TYPE", "STATUS", "RECEIVED AT"],
          report.oldUndone.map((e) => [
            e.id,
            e.source,
            oneLine(e.type, 60),
            e.status,
            e.receivedAt,
          ]),
        ),
      );
    }
    ctx.stdout.write(`${sections.join("\n")}\n`);
    return 1;
  } finally {
    await store.close();
  }
}
