import { describe, expect, it } from "vitest";
import type { HookinboxConfig } from "../../src/config/index.ts";
import { isHookinboxError } from "../../src/errors.ts";
import { maskUrl, scrubPassword } from "../../src/forward/bus/message.ts";
import { busVerdict } from "../../src/forward/run-forward.ts";
import { createInbox } from "../../src/inbox.ts";
import { listDestinations } from "../../src/operations/destinations.ts";
import { secrets } from "../helpers/signers.ts";
import { destinationSecret } from "./forward-env.ts";

// Queue destinations in the config: refused with a clear message before anything runs (strict
// keys, the broker's URL scheme, `{ env }` URLs), listed with their type, and their results read
// into the stable error codes. No broker is needed here.

const sources = { std: { provider: "standard-webhooks", secrets: [secrets.standard] } } as const;

/** The inbox for a config, or the code and message it throws at boot. */
function boot(destinations: Record<string, unknown>, env: Record<string, string> = {}) {
  try {
    const input = {
      store: "sqlite::memory:",
      sources,
      destinations,
      routes: [{ from: "std", to: Object.keys(destinations) }],
    } as HookinboxConfig;
    return { inbox: createInbox(input, { env }), error: null };
  } catch (error) {
    if (!isHookinboxError(error)) throw error;
    return { inbox: null, error: { code: error.code, message: error.message } };
  }
}

const refusal = (destinations: Record<string, unknown>, env: Record<string, string> = {}) => {
  const { inbox, error } = boot(destinations, env);
  void inbox?.close();
  return error;
};

describe("queue destinations in the config", () => {
  it("refuses an unknown type, unknown keys, a missing exchange, a wrong scheme, a bad template, an HTTP key and a zero maxLen", () => {
    expect(refusal({ bus: { type: "kafka", url: "kafka://x" } })?.message).toContain(
      'unknown destination type; expected "http" (the default), "amqp", "nats" or "redis"',
    );
    const unknownKey = refusal({
      bus: { type: "nats", url: "nats://127.0.0.1:4222", subjekt: "a" },
    });
    expect(unknownKey?.code).toBe("HOOKINBOX_CONFIG_INVALID");
    expect(unknownKey?.message).toContain("destinations.bus");
    expect(unknownKey?.message).toContain("subjekt");
    expect(refusal({ bus: { type: "amqp", url: "amqp://127.0.0.1" } })?.message).toContain(
      "destinations.bus.exchange",
    );
    expect(refusal({ bus: { type: "redis", url: "http://127.0.0.1:6379" } })?.message).toContain(
      "expected a URL starting with redis:// or rediss://",
    );
    expect(
      refusal({ bus: { type: "nats", url: "nats://127.0.0.1:4222", subject: "a.{id}" } })?.message,
    ).toContain("{source} and {type} placeholders only");
    expect(
      refusal({ bus: { type: "redis", url: "redis://127.0.0.1", secret: destinationSecret } })
        ?.message,
    ).toContain("secret");
    expect(
      refusal({ bus: { type: "redis", url: "redis://127.0.0.1", maxLen: { count: 0 } } })?.code,
    ).toBe("HOOKINBOX_CONFIG_INVALID");
  });

  it("reads a URL from the environment: unset is HOOKINBOX_SECRET_ENV_MISSING, a wrong scheme is refused without showing it", () => {
    const unset = refusal({ bus: { type: "amqp", url: { env: "AMQP_URL" }, exchange: "events" } });
    expect(unset?.code).toBe("HOOKINBOX_SECRET_ENV_MISSING");
    expect(unset?.message).toContain("destinations.bus.url reads environment variable AMQP_URL");
    const wrong = refusal(
      { bus: { type: "amqp", url: { env: "AMQP_URL" }, exchange: "events" } },
      { AMQP_URL: "redis://user:hunter2@mq:5672" },
    );
    expect(wrong?.message).toContain(
      'destinations.bus.url: expected a URL starting with amqp:// or amqps:// (type "amqp")',
    );
    expect(wrong?.message).not.toContain("hunter2");
  });

  it("lists each destination with its type; HTTP stays the default with or without type", async () => {
    const { inbox } = boot(
      {
        app: { url: "https://app.example.com/hooks", secret: destinationSecret },
        typed: { type: "http", url: "https://app.example.com/other", secret: destinationSecret },
        bus: { type: "redis", url: { env: "REDIS_URL" }, maxLen: { count: 1000 } },
        mq: { type: "amqp", url: "amqp://app:hunter2@mq.internal:5672/prod", exchange: "events" },
      },
      { REDIS_URL: "redis://:hunter2@cache.internal:6379/0" },
    );
    expect(inbox).not.toBeNull();
    await inbox!.ready();
    const { items } = await listDestinations.run(inbox!.operations, {});
    await inbox!.close();
    expect(items.map((d) => [d.name, d.type, d.url])).toEqual([
      ["app", "http", "https://app.example.com/hooks"],
      ["typed", "http", "https://app.example.com/other"],
      ["bus", "redis", "redis://cache.internal:6379/0"],
      ["mq", "amqp", "amqp://mq.internal:5672/prod"],
    ]);
    expect(JSON.stringify(items)).not.toContain("hunter2");
  });

  it("masks passwords in URLs and messages; reads publish results into the stable codes", () => {
    expect(maskUrl("amqp://app:s3cret@mq.internal:5672/prod")).toBe(
      "amqp://app:***@mq.internal:5672/prod",
    );
    expect(scrubPassword("auth s3cret%21 / s3cret!", "redis://:s3cret%21@cache:6379")).toBe(
      "auth *** / ***",
    );
    const base = {
      status: null,
      headers: null,
      body: null,
      latencyMs: 1,
      refused: false,
      aborted: false,
    };
    expect(busVerdict({ ...base, errorClass: null, error: null })).toEqual({ kind: "done" });
    expect(busVerdict({ ...base, errorClass: "connect", error: "ECONNREFUSED" })).toMatchObject({
      kind: "retry",
      code: "HOOKINBOX_BUS_UNREACHABLE",
      permanent: false,
    });
    for (const errorClass of ["publish", "reset", "timeout"])
      expect(busVerdict({ ...base, errorClass, error: "nack" })).toMatchObject({
        kind: "retry",
        code: "HOOKINBOX_BUS_PUBLISH_FAILED",
        permanent: false,
      });
  });
});
