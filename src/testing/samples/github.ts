// Payload: trimmed from @octokit/webhooks-examples, api.github.com/issues/opened.payload.json
// (octokit/webhooks, MIT): the issue, repository and sender objects minus their URL fields.
import { randomUUID } from "node:crypto";
import { digits, mac } from "./sign.ts";
import type { ProviderSample, SampleInput } from "./types.ts";

const user = { login: "Codertocat", id: 21031067, node_id: "MDQ6VXNlcjIxMDMxMDY3", type: "User" };

function issuePayload(input: SampleInput, action: string | undefined) {
  const number = input.resource === undefined ? 1 : Number(digits(input.resource, 4));
  const updated =
    input.sequence === undefined
      ? "2019-05-15T15:20:18Z"
      : new Date(input.sequence * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
  return {
    ...(action === undefined ? {} : { action }),
    issue: {
      url: `https://api.github.com/repos/Codertocat/Hello-World/issues/${number}`,
      html_url: `https://github.com/Codertocat/Hello-World/issues/${number}`,
      id: 444500041,
      node_id: "MDU6SXNzdWU0NDQ1MDAwNDE=",
      number,
      title: "Spelling error in the README file",
      user,
      labels: [{ id: 1362934389, name: "bug", color: "d73a4a", default: true }],
      state: "open",
      locked: false,
      comments: 0,
      created_at: "2019-05-15T15:20:18Z",
      updated_at: updated,
      closed_at: null,
      author_association: "OWNER",
      body: "It looks like you accidently spelled 'commit' with two 't's.",
    },
    repository: {
      id: 186853002,
      node_id: "MDEwOlJlcG9zaXRvcnkxODY4NTMwMDI=",
      name: "Hello-World",
      full_name: "Codertocat/Hello-World",
      private: false,
      owner: user,
      html_url: "https://github.com/Codertocat/Hello-World",
      default_branch: "master",
    },
    sender: user,
  };
}

/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>` (and the legacy
 * `X-Hub-Signature: sha1=…`, which GitHub still sends), the delivery GUID in
 * `X-GitHub-Delivery`, the event in `X-GitHub-Event`. A type `issues.opened` is sent as event
 * `issues` with `action: "opened"`; `ping` sends GitHub's ping body.
 *
 * @example
 * ```ts
 * githubSample.build({ secret: "s", url, nowMs: Date.now(), id: githubSample.newId(), type: "issues.opened" });
 * ```
 */
export const githubSample: ProviderSample = {
  provider: "github",
  origin: "@octokit/webhooks-examples api.github.com/issues/opened.payload.json, trimmed",
  defaultType: "issues.opened",
  unhandledType: "star.created",
  exampleSecret: "It's a Secret to Everybody",
  traits: () => ({ signs: "body", bodyFormat: "json" }),
  newId: () => randomUUID(),
  build(input) {
    const type = input.type ?? this.defaultType;
    const dot = type.indexOf(".");
    const event = dot < 0 ? type : type.slice(0, dot);
    const action = dot < 0 ? undefined : type.slice(dot + 1);
    const body =
      input.body ??
      JSON.stringify(
        event === "ping"
          ? { zen: "Keep it logically awesome.", hook_id: 109948940, sender: user }
          : issuePayload(input, action),
      );
    return {
      url: input.url,
      headers: {
        "content-type": "application/json",
        "user-agent": "GitHub-Hookshot/044aadd",
        "x-github-delivery": input.id,
        "x-github-event": event,
        "x-github-hook-id": "109948940",
        "x-hub-signature": `sha1=${mac("sha1", input.secret, body, "hex")}`,
        "x-hub-signature-256": `sha256=${mac("sha256", input.secret, body, "hex")}`,
      },
      body,
      eventId: input.id,
      type,
      ...(input.sequence === undefined ? {} : { version: String(input.sequence) }),
    };
  },
};
