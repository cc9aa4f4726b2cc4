// Processing right after a response, for serverless hosts without a long-lived worker: the route
// answers once the event is stored, then the host's `after` (Next.js) runs the event's deliveries
// for a bounded time. Whatever does not finish stays due for the next call or the cron route.
import type { Inbox } from "../inbox.ts";
import { acceptedEventIds } from "../ingest/accepted-events.ts";
import type { ProcessAvailableOptions } from "../queue/process-available.ts";

/**
 * How long and how wide one run after a response may go: `inbox.processAvailable`'s `maxMs`,
 * `graceMs` and `concurrency` (its `eventIds` are the accepted events).
 */
export type ProcessAfterResponse = Omit<ProcessAvailableOptions, "eventIds">;

/** Next.js's `after` (from `next/server`), or anything that runs a task once the response is sent. */
export type AfterFunction = (task: () => Promise<void>) => void;

/** The message and code of anything thrown, for a log line (never a body or a secret). */
function describe(error: unknown): { message: string; code?: string } {
  if (!(error instanceof Error)) return { message: String(error) };
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? { message: error.message, code } : { message: error.message };
}

/**
 * After a 2xx that accepted events, hands `after` a task that processes them (the original's id
 * for a duplicate, since the first delivery may not have run yet). A 2xx without the accepted
 * mark (not from ingest) processes whatever is due; a handshake (marked with no events) and any
 * refusal schedule nothing. The task never throws: failures go to the inbox's logger.
 *
 * @example
 * ```ts
 * const response = await handle(request, { source });
 * processAfter(after, inbox, response, { maxMs: 10_000 });
 * return response;
 * ```
 */
export function processAfter(
  after: AfterFunction,
  inbox: Inbox,
  response: Response,
  options: ProcessAfterResponse,
): void {
  if (response.status < 200 || response.status > 299) return;
  const eventIds = acceptedEventIds(response);
  if (eventIds !== undefined && eventIds.length === 0) return;
  const task = async () => {
    try {
      const summary = await inbox.processAvailable({
        ...options,
        ...(eventIds === undefined ? {} : { eventIds }),
      });
      inbox.logger.info(
        { events: eventIds?.length ?? null, ...summary },
        "processed after the response",
      );
    } catch (error) {
      inbox.logger.error(
        { events: eventIds?.length ?? null, err: describe(error) },
        "processing after the response failed; the cron route or a later call runs what is left",
      );
    }
  };
  try {
    after(task);
  } catch (error) {
    inbox.logger.error({ err: describe(error) }, "after() refused the processing task");
  }
}
