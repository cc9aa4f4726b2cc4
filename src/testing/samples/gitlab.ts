// Payload: an Issue Hook as in GitLab's webhook events docs
// (docs.gitlab.com/user/project/integrations/webhook_events, "Work item events"), trimmed.
import { randomUUID } from "node:crypto";
import { digits, mac, seconds } from "./sign.ts";
import type { ProviderSample } from "./types.ts";

const signingToken = (secret: string) => secret.startsWith("whsec_");

/**
 * GitLab: the secret token travels as is in `X-Gitlab-Token` (nothing is signed); a
 * `whsec_…` secret is a signing token instead, and the sample then signs Standard Webhooks
 * headers (`webhook-id` = `Idempotency-Key`). Type `Issue Hook` is the `X-Gitlab-Event`.
 *
 * @example
 * ```ts
 * gitlabSample.build({ secret: "token", url, nowMs: Date.now(), id: gitlabSample.newId() }).headers["x-gitlab-token"]; // "token"
 * ```
 */
export const gitlabSample: ProviderSample = {
  provider: "gitlab",
  origin: "docs.gitlab.com webhook events: Issue Hook example, trimmed",
  defaultType: "Issue Hook",
  unhandledType: "Emoji Hook",
  exampleSecret: "glpat-hookinbox-example-secret-token",
  traits: (secret) =>
    signingToken(secret)
      ? { signs: "body", timestampWindowMs: 300_000, bodyFormat: "json" }
      : { signs: "nothing", bodyFormat: "json" },
  newId: () => randomUUID(),
  build(input) {
    const type = input.type ?? this.defaultType;
    const updated = new Date(
      input.sequence === undefined ? input.nowMs : input.sequence * 1000,
    ).toISOString();
    const iid = input.resource === undefined ? 23 : Number(digits(input.resource, 4));
    const body =
      input.body ??
      JSON.stringify({
        object_kind: "issue",
        event_type: "issue",
        user: { id: 1, name: "Administrator", username: "root" },
        project: { id: 1, name: "Gitlab Test", path_with_namespace: "gitlabhq/gitlab-test" },
        object_attributes: {
          id: 301,
          iid,
          title: "New API: create/update/delete file",
          state: "opened",
          action: "open",
          updated_at: updated,
        },
        labels: [{ id: 206, title: "API" }],
      });
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "user-agent": "GitLab/17.5.0",
      "x-gitlab-event": type,
      "x-gitlab-event-uuid": input.id,
      "x-gitlab-instance": "https://gitlab.example.com",
      "x-gitlab-webhook-uuid": "2a4ad5dc-1ff2-4b94-9fcd-a3f4f1cd6a6f",
      "idempotency-key": input.id,
    };
    if (signingToken(input.secret)) {
      const t = seconds(input.nowMs);
      const key = Buffer.from(input.secret.slice("whsec_".length), "base64");
      headers["webhook-id"] = input.id;
      headers["webhook-timestamp"] = String(t);
      headers["webhook-signature"] =
        `v1,${mac("sha256", key, `${input.id}.${t}.${body}`, "base64")}`;
    } else {
      headers["x-gitlab-token"] = input.secret;
    }
    return { url: input.url, headers, body, eventId: input.id, type, version: updated };
  },
};
