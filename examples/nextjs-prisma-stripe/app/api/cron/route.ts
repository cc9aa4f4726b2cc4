// GET /api/cron, called by Vercel Cron (vercel.json) with Authorization: Bearer $CRON_SECRET:
// runs whatever is due (retries, events whose after-response run was cut short, deliveries
// rescued from an invocation that died).
import { nextCronRoute } from "hookinbox/next";
import { inbox } from "@/lib/inbox";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";
export const maxDuration = 60;

export const { GET } = nextCronRoute(inbox, { maxMs: 40_000, graceMs: 10_000, concurrency: 4 });
