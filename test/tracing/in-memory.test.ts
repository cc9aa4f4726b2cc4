import { Writable } from "node:stream";
import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
} from "@opentelemetry/semantic-conventions";
import { describe, expect, it } from "vitest";
import type { HandlerContext, HandlerEvent } from "../../src/index.ts";
import { createLogger } from "../../src/log.ts";
import {
  destination,
  destinationSecret,
  forwardingInbox,
  receiver,
} from "../forward/forward-env.ts";
import { until } from "../helpers/processing.ts";
import { secrets, standardRequest } from "../helpers/signers.ts";
import { type StoreFactory, storeFactories } from "../helpers/stores.ts";
import { attributeTexts, useInMemorySdk } from "./in-memory-sdk.ts";

// Spans from a real inbox (SQLite file, loopback destination, in-process worker) exported to the
// SDK's in-memory exporter: names, kinds, parentage through the store, attributes, the
// traceparent a destination and a handler get, log lines' ids, and no body or secret anywhere.

const sdk = useInMemorySdk();
const sqlite = storeFactories().find((f) => f.name === "sqlite")!;
/** A marker inside every body: no attribute may contain it. */
const bodyMarker = "card-4242-body-only";

function logLines() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: createLogger({ level: "info", destination: stream }) };
}

async function tracedInbox(factory: StoreFactory, tracing: boolean) {
  const app = await receiver();
  const seen: Array<{ traceparent: string | null; eventId: string }> = [];
  const { lines, logger } = logLines();
  const env = await forwardingInbox(
    factory,
    { app: destination(app.url) },
    {
      tracing: { enabled: tracing },
      handlers: {
        "std:*": async (event: HandlerEvent, ctx: HandlerContext) => {
          // A failing handler's message may quote the payload: it must stay out of the spans.
          if (event.type === "boom") throw new Error(`cannot charge ${bodyMarker}`);
          seen.push({ traceparent: ctx.traceparent, eventId: event.id });
          // The application's own span joins the attempt's trace by itself.
          trace.getTracer("app").startActiveSpan("app.work", (span) => span.end());
        },
      },
    },
    { logger },
  );
  return { ...env, app, seen, lines };
}

describe.each(storeFactories())("tracing on, with an SDK registered ($name)", (factory) => {
  it("one event: webhook.receive, then a delivery.attempt per target parented to it across the store, the destination's POST under its attempt", async () => {
    const { inbox, post, app, seen, lines } = await tracedInbox(factory, true);
    const { eventId } = await post("msg_trace_1", { type: "invoice.paid", note: bodyMarker });
    inbox.startWorker();
    await until(() => sdk.spans("delivery.attempt").length === 2 && app.requests.length === 1);
    await until(() => sdk.spans("POST").length === 1);

    const [receive] = sdk.spans("webhook.receive");
    expect(sdk.spans("webhook.receive")).toHaveLength(1);
    expect(receive!.kind).toBe(SpanKind.SERVER);
    expect(receive!.parentSpanContext).toBeUndefined();
    expect(receive!.attributes).toEqual({
      "http.request.method": "POST",
      "url.path": "/webhooks/std",
      "http.request.body.size": expect.any(Number),
      "hookinbox.source": "std",
      "hookinbox.outcome": "stored",
      "hookinbox.event.count": 1,
      "hookinbox.event.id": eventId,
      "hookinbox.event.type": "invoice.paid",
      "hookinbox.duplicate": false,
      "hookinbox.deliveries": 2,
      "http.response.status_code": 200,
    });
    expect(receive!.events.map((e) => e.name)).toEqual(["verified", "identified", "stored"]);
    const traceId = receive!.spanContext().traceId;

    const attempts = sdk.spans("delivery.attempt");
    for (const attempt of attempts) {
      expect(attempt.kind).toBe(SpanKind.CONSUMER);
      expect(attempt.spanContext().traceId).toBe(traceId);
      expect(attempt.parentSpanContext?.spanId).toBe(receive!.spanContext().spanId);
      expect(attempt.attributes).toMatchObject({
        "hookinbox.source": "std",
        "hookinbox.event.id": eventId,
        "hookinbox.event.type": "invoice.paid",
        "hookinbox.attempt": 1,
        "hookinbox.replay": false,
        "hookinbox.outcome": "done",
      });
      expect(attempt.attributes["hookinbox.claim_wait_ms"]).toBeGreaterThanOrEqual(0);
      expect(attempt.status.code).toBe(SpanStatusCode.UNSET);
    }
    expect(
      attempts
        .map(
          (a) => `${a.attributes["hookinbox.target"]} ${a.attributes["hookinbox.delivery.kind"]}`,
        )
        .sort(),
    ).toEqual(["app forward", "std:* handler"]);

    // The forward: an HTTP client span under its attempt, whose id the destination received.
    const forward = attempts.find((a) => a.attributes["hookinbox.target"] === "app")!;
    const [postSpan] = sdk.spans("POST");
    expect(postSpan!.kind).toBe(SpanKind.CLIENT);
    expect(postSpan!.parentSpanContext?.spanId).toBe(forward.spanContext().spanId);
    expect(postSpan!.attributes).toEqual({
      "http.request.method": "POST",
      "server.address": "127.0.0.1",
      "server.port": app.port,
      "url.scheme": "http",
      "http.response.status_code": 200,
    });
    // The HTTP attributes are the stable semantic conventions' names.
    for (const name of [ATTR_HTTP_REQUEST_METHOD, ATTR_URL_PATH, ATTR_HTTP_RESPONSE_STATUS_CODE]) {
      expect(receive!.attributes).toHaveProperty([name]);
    }
    for (const name of [
      ATTR_HTTP_REQUEST_METHOD,
      ATTR_SERVER_ADDRESS,
      ATTR_SERVER_PORT,
      ATTR_URL_SCHEME,
      ATTR_HTTP_RESPONSE_STATUS_CODE,
    ]) {
      expect(postSpan!.attributes).toHaveProperty([name]);
    }
    expect(app.requests[0]!.headers.traceparent).toBe(
      `00-${traceId}-${postSpan!.spanContext().spanId}-01`,
    );

    // The handler: ctx.traceparent is its attempt's span, and its own span is a child of it.
    const handled = attempts.find((a) => a.attributes["hookinbox.target"] === "std:*")!;
    expect(seen).toEqual([
      { eventId, traceparent: `00-${traceId}-${handled.spanContext().spanId}-01` },
    ]);
    const appSpans = sdk.all().filter((s) => s.name === "app.work");
    expect(appSpans).toHaveLength(1);
    expect(appSpans[0]!.parentSpanContext?.spanId).toBe(handled.spanContext().spanId);

    // Log lines written under a span carry its ids.
    const webhookLine = lines.find((l) => l.msg === "webhook");
    expect(webhookLine).toMatchObject({
      trace_id: traceId,
      span_id: receive!.spanContext().spanId,
    });
    const deliveryLines = lines.filter((l) => l.msg === "delivery" && l.outcome === "done");
    expect(deliveryLines).toHaveLength(1);
    expect(deliveryLines[0]).toMatchObject({
      trace_id: traceId,
      span_id: handled.spanContext().spanId,
    });
  });

  it("a replay starts a trace of its own, linked to the receive span that stored the event", async () => {
    const { inbox, post, seen } = await tracedInbox(factory, true);
    const { eventId } = await post("msg_trace_replay", { type: "invoice.paid", note: bodyMarker });
    inbox.startWorker();
    await until(() => sdk.spans("delivery.attempt").length === 2);
    await inbox.store.replayEvent({ eventId, targets: ["std:*"], now: Date.now() });
    await until(() => sdk.spans("delivery.attempt").length === 3 && seen.length === 2);
    const [receive] = sdk.spans("webhook.receive");
    const replays = sdk.spans("delivery.attempt").filter((a) => a.attributes["hookinbox.replay"]);
    expect(replays).toHaveLength(1);
    const [replay] = replays;
    expect(replay!.parentSpanContext).toBeUndefined();
    expect(replay!.spanContext().traceId).not.toBe(receive!.spanContext().traceId);
    expect(replay!.links.map((l) => l.context.spanId)).toEqual([receive!.spanContext().spanId]);
    expect(seen[1]!.traceparent).toBe(
      `00-${replay!.spanContext().traceId}-${replay!.spanContext().spanId}-01`,
    );
  });

  it("a duplicate, a forged signature and a sender's traceparent: outcome, code and a link, never a parent", async () => {
    const { inbox, post, postForged } = await tracedInbox(factory, true);
    await post("msg_trace_2", { type: "invoice.paid", note: bodyMarker });
    await post("msg_trace_2", { type: "invoice.paid", note: bodyMarker });
    expect(await postForged("msg_trace_3", { type: "invoice.paid", note: bodyMarker })).toBe(401);
    const senderTrace = "0af7651916cd43dd8448eb211c80319c";
    const signed = standardRequest("msg_trace_4", JSON.stringify({ type: "x", note: bodyMarker }));
    const answer = await inbox.handle({
      method: "POST",
      url: "/webhooks/std?token=query-secret",
      headers: { ...signed.headers, traceparent: `00-${senderTrace}-b7ad6b7169203331-01` },
      body: new TextEncoder().encode(signed.body),
    });
    expect(answer.status).toBe(200);

    const receives = sdk.spans("webhook.receive");
    expect(receives).toHaveLength(4);
    const [first, duplicate, forged, linked] = receives;
    expect(first!.attributes["hookinbox.outcome"]).toBe("stored");
    expect(duplicate!.attributes).toMatchObject({
      "hookinbox.outcome": "duplicate",
      "hookinbox.duplicate": true,
      "hookinbox.deliveries": 0,
      "hookinbox.event.id": first!.attributes["hookinbox.event.id"],
    });
    expect(forged!.attributes).toMatchObject({
      "hookinbox.outcome": "rejected",
      "error.type": "HOOKINBOX_SIGNATURE_MISMATCH",
      "http.response.status_code": 401,
    });
    expect(forged!.events.map((e) => e.name)).toEqual([]);
    // A 4xx is the sender's fault: not an error of hookinbox's server span.
    expect(forged!.status.code).toBe(SpanStatusCode.UNSET);
    expect(linked!.spanContext().traceId).not.toBe(senderTrace);
    expect(linked!.parentSpanContext).toBeUndefined();
    expect(linked!.links.map((l) => l.context.traceId)).toEqual([senderTrace]);
    expect(linked!.attributes["url.path"]).toBe("/webhooks/std");
  });

  it("no attribute of any span holds a body, a signature or a secret", async () => {
    const { inbox, post, postForged, app } = await tracedInbox(factory, true);
    await post("msg_trace_5", { type: "invoice.paid", note: bodyMarker });
    await postForged("msg_trace_6", { type: "invoice.paid", note: bodyMarker });
    await post("msg_trace_7", { type: "boom", note: bodyMarker });
    inbox.startWorker();
    const failed = () =>
      sdk.spans("delivery.attempt").filter((a) => a.attributes["hookinbox.outcome"] === "retry");
    await until(() => failed().length >= 1 && sdk.spans("POST").length >= 2);
    expect(failed()[0]!.status.code).toBe(SpanStatusCode.ERROR);
    expect(failed()[0]!.attributes["error.type"]).toBe("retry");
    // Stopped here, so the retries of "boom" make no spans after this test.
    await inbox.close();
    const texts = attributeTexts(sdk.all());
    expect(texts.length).toBeGreaterThan(40);
    const signed = standardRequest("msg_trace_5", JSON.stringify({ note: bodyMarker }));
    const forbidden = [
      bodyMarker,
      secrets.standard,
      secrets.standard.replace(/^whsec_/, ""),
      destinationSecret,
      destinationSecret.replace(/^whsec_/, ""),
      signed.headers["webhook-signature"]!.slice(3, 20),
      app.requests[0]!.headers["webhook-signature"]!.slice(3, 20),
      "query-secret",
    ];
    for (const secret of forbidden) {
      expect(texts.filter((t) => t.includes(secret))).toEqual([]);
    }
  });
});

describe("tracing off (the default)", () => {
  it("starts no span even with an SDK registered: no traceparent sent, ctx.traceparent null, no ids in logs", async () => {
    const { inbox, post, app, seen, lines } = await tracedInbox(sqlite, false);
    await post("msg_trace_off", { type: "invoice.paid", note: bodyMarker });
    inbox.startWorker();
    await until(() => app.requests.length === 1 && seen.length === 1);
    await inbox.close();
    expect(sdk.spans()).toHaveLength(0);
    expect(app.requests[0]!.headers.traceparent).toBeUndefined();
    expect(seen[0]!.traceparent).toBeNull();
    expect(lines.filter((l) => "trace_id" in l)).toHaveLength(0);
    // The handler's own span still starts a trace of its own, outside hookinbox.
    expect(sdk.all().filter((s) => s.name === "app.work")).toHaveLength(1);
    expect(trace.getSpan(context.active())).toBeUndefined();
  });
});
