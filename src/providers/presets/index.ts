/**
 * The presets, each one file in this folder: providers whose scheme is a variant of one the
 * catalogue already verifies (see kit.ts). This is their one list, in catalogue order; the
 * registry (../registry.ts) re-exports it and presets.ts derives its table from it.
 */

export { bitbucket } from "./bitbucket.ts";
export { calendly } from "./calendly.ts";
export { clerk } from "./clerk.ts";
export { coinbase } from "./coinbase.ts";
export { jira } from "./jira.ts";
export { lemonsqueezy } from "./lemonsqueezy.ts";
export { postmark } from "./postmark.ts";
export { razorpay } from "./razorpay.ts";
export { resend } from "./resend.ts";
export { sentry } from "./sentry.ts";
export { telegram } from "./telegram.ts";
export { typeform } from "./typeform.ts";
export { vercel } from "./vercel.ts";
export { workos } from "./workos.ts";
export { zendesk } from "./zendesk.ts";
