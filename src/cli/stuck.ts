import type { Command } from "commander";
import { stuckWork } from "../operations/stuck.ts";
import { oneLine } from "./cli-args.ts";
import type { CommandHost } from "./command-host.ts";
import { renderTable } from "./table.ts";

type StuckReport = Awaited<ReturnType<typeof stuckWork.run>>;

/** One section of the report: a heading with its count, then its table; none when empty. */
function section<T>(
  items: readonly T[],
  heading: string,
  header: string[],
  row: (item: T) => string[],
): string[] {
  if (items.length === 0) return [];
  return [`${heading.replace("{n}", String(items.length))}`, renderTable(header, items.map(row))];
}

/** The cells every leased-delivery row starts with: delivery, event, target, lease owner and time. */
function leaseCells(d: StuckReport["expiredLeases"][number]): string[] {
  return [d.id, d.eventId, d.target, d.leaseOwner ?? "-", d.leaseExpiresAt ?? "-"];
}

function stuckText(report: StuckReport, olderThan: string): string {
  if (!report.stuck)
    return `nothing is stuck: no expired leases, no abandoned handlers, no blocked ordering keys, no effects held, no event older than ${olderThan} left undone`;
  return [
    ...section(
      report.expiredLeases,
      "expired leases ({n}): their worker stopped; a running worker rescues them",
      ["DELIVERY", "EVENT", "TARGET", "LEASE OWNER", "LEASE EXPIRED AT", "ATTEMPTS"],
      (d) => [...leaseCells(d), String(d.attempts)],
    ),
    ...section(
      report.abandoned,
      "abandoned handlers ({n}): they ignored their timeout's abort; their lease expires, then the delivery is retried",
      ["DELIVERY", "EVENT", "TARGET", "LEASE OWNER", "LEASE EXPIRES AT", "ERROR"],
      (d) => [...leaseCells(d), oneLine(d.lastError, 80)],
    ),
    ...section(
      report.blockedKeys,
      "ordering keys blocked by a dead delivery ({n}): fix the cause, then `hookinbox retry <delivery>` releases what waits",
      ["DEAD DELIVERY", "EVENT", "TARGET", "ORDERING KEY", "PARKED", "LAST ERROR"],
      (k) => [
        k.deliveryId,
        k.eventId,
        k.target,
        oneLine(k.orderingKey, 40),
        String(k.parked),
        oneLine(k.lastError, 60),
      ],
    ),
    ...section(
      report.heldEffects,
      "effects held for a human ({n}): check whether each happened, then `hookinbox effects resolve <id> --done|--release`",
      ["EFFECT", "EVENT", "TARGET", "NAME", "CLAIMS", "CLAIMED AT"],
      (e) => [e.id, e.eventId, e.target, e.name, String(e.claims), e.claimedAt ?? "-"],
    ),
    ...section(
      report.oldUndone,
      `events older than ${olderThan} not done ({n}): see \`hookinbox events show <id>\` and \`hookinbox dlq list\``,
      ["EVENT", "SOURCE", "TYPE", "STATUS", "RECEIVED AT"],
      (e) => [e.id, e.source, oneLine(e.type, 60), e.status, e.receivedAt],
    ),
  ].join("\n");
}

/**
 * `hookinbox stuck [--older-than 1h] [--limit N] [--json]`: what needs a human: deliveries whose
 * lease expired with no worker to rescue them, handlers abandoned after their timeout, ordering
 * keys blocked by a dead delivery, effects held for a human, and events older than the threshold
 * that are still not done. Exits 0 when nothing is stuck and 1 when something is, so it can run
 * from cron or a monitoring check as it is.
 *
 * @example
 * ```ts
 * registerStuck(program, host); // hookinbox stuck --older-than 30m
 * ```
 */
export function registerStuck(program: Command, host: CommandHost): void {
  host
    .leaf(program, "stuck", `${stuckWork.summary} (exit 1 when anything is)`)
    .option("--older-than <duration>", 'events older than this and not done count (default "1h")')
    .option("--limit <n>", "rows per section, 1 to 500 (default 50)")
    .action((options) => {
      const olderThan: string = options.olderThan ?? "1h";
      return host.run(
        options,
        {
          operation: stuckWork,
          access: "read",
          text: (report) => stuckText(report, olderThan),
          exitCode: (report) => (report.stuck ? 1 : 0),
        },
        { olderThan, limit: options.limit },
      );
    });
}
