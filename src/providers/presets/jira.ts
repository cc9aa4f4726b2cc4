/** Jira Cloud (Atlassian) webhooks with a secret: `X-Hub-Signature: sha256=<hex>`. */

import { definePreset, hexBody } from "./kit.ts";

/** A Jira (Atlassian) source (`X-Hub-Signature: sha256=`). @example `jira({ secrets: [{ env: "JIRA_WEBHOOK_SECRET" }] })` */
export const jira = definePreset("jira", {
  docs: "#jira-atlassian",
  headers: {
    signature: ["x-hub-signature"],
    context: ["x-atlassian-webhook-identifier", "x-atlassian-webhook-retry"],
  },
  verify: hexBody("x-hub-signature", "sha256="),
  identity: Object.freeze({
    id: "header:x-atlassian-webhook-identifier",
    type: "$.webhookEvent",
    occurredAt: "$.timestamp",
    orderingKey: "$.issue.key",
  }),
});
