// POST /api/webhooks/stripe: verify, store once, answer 200, then process the event after the
// response (inside this invocation). What does not finish here, the cron route runs.
import { nextRouteHandler } from "hookinbox/next";
import { after } from "next/server";
import { inbox } from "@/lib/inbox";

export const runtime = "nodejs";
// Vercel ends the invocation after this many seconds, work after the response included: keep
// maxMs + graceMs below it, and the inbox's lease above it.
export const maxDuration = 60;

export const { POST } = nextRouteHandler(inbox, {
  after,
  processAfterResponse: { maxMs: 40_000, graceMs: 10_000, concurrency: 4 },
});
