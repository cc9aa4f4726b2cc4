// The safety net of serverless processing: a cron route (Vercel Cron) that runs whatever is due,
// for events whose after-response run was cut short, retries whose backoff has passed, and
// deliveries rescued from an invocation that died.
import { createHash, timingSafeEqual } from "node:crypto";
import { type HookinboxError, hookinboxError } from "../errors.ts";
import type { Inbox } from "../inbox.ts";
import type { ProcessAfterResponse } from "./process-after.ts";

/** Options of `nextCronRoute`: the run's bounds and where the secret comes from. */
export interface NextCronOptions extends ProcessAfterResponse {
  /**
   * The bearer secret the scheduler sends (default: `process.env.CRON_SECRET`, read on each
   * request, which is what Vercel Cron sends as `Authorization: Bearer …`).
   */
  readonly secret?: string | (() => string | undefined);
}

/** What `nextCronRoute` returns: export its `GET` from `route.ts`. */
export interface NextCronRoute {
  GET(request: Request): Promise<Response>;
}

const digest = (value: string) => createHash("sha256").update(value).digest();

/** Whether `Authorization` is `Bearer <secret>`, compared in constant time (hashes first). */
function bearerMatches(authorization: string | null, secret: string): boolean {
  const match = /^Bearer\s+(.+)$/i.exec(authorization?.trim() ?? "");
  return match !== null && timingSafeEqual(digest(match[1]!), digest(secret));
}

function refusal(error: HookinboxError): Response {
  return Response.json(
    { error: { code: error.code, message: error.message } },
    { status: error.status, headers: { "cache-control": "no-store" } },
  );
}

/**
 * A `GET` route handler for a scheduled run (Vercel Cron): checks `Authorization: Bearer
 * <CRON_SECRET>` in constant time (401 `HOOKINBOX_CRON_UNAUTHORIZED`; 503
 * `HOOKINBOX_CRON_SECRET_UNSET` when no secret is configured, so an unset variable never leaves
 * the route open), then runs `inbox.processAvailable` for at most `maxMs + graceMs` and answers
 * 200 with its summary. Set the route's `maxDuration` above that, and the lease above both.
 *
 * @example
 * ```ts
 * // app/api/cron/route.ts (and in vercel.json: "crons": [{ "path": "/api/cron", "schedule": "* * * * *" }])
 * import { nextCronRoute } from "hookinbox/next";
 * import { inbox } from "@/lib/inbox";
 *
 * export const runtime = "nodejs";
 * export const maxDuration = 60;
 * export const { GET } = nextCronRoute(inbox, { maxMs: 40_000, graceMs: 10_000 });
 * ```
 */
export function nextCronRoute(
  inbox: Inbox | (() => Inbox),
  options: NextCronOptions = {},
): NextCronRoute {
  const { secret, ...bounds } = options;
  const configuredSecret = () =>
    (typeof secret === "function" ? secret() : (secret ?? process.env.CRON_SECRET)) || undefined;
  let created: Inbox | undefined;
  return {
    async GET(request) {
      const expected = configuredSecret();
      if (expected === undefined) return refusal(hookinboxError("HOOKINBOX_CRON_SECRET_UNSET"));
      if (!bearerMatches(request.headers.get("authorization"), expected)) {
        return refusal(hookinboxError("HOOKINBOX_CRON_UNAUTHORIZED"));
      }
      created ??= typeof inbox === "function" ? inbox() : inbox;
      try {
        const summary = await created.processAvailable(bounds);
        created.logger.info(summary, "cron run processed what was due");
        return Response.json(
          { ok: true, ...summary },
          { headers: { "cache-control": "no-store" } },
        );
      } catch (error) {
        const answer = created.internalError(error, { method: "GET" });
        return new Response(answer.body, { status: answer.status, headers: answer.headers });
      }
    },
  };
}
