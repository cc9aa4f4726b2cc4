import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { expect, it } from "vitest";
import { destinationSecret } from "../forward/forward-env.ts";
import { postEvent, useCluster } from "../helpers/cluster.ts";
import { spawnCommand } from "../helpers/gateway-process.ts";
import { until } from "../helpers/processing.ts";
import { startReceiver } from "../helpers/receiver.ts";
import { secrets } from "../helpers/signers.ts";
import { repoRoot } from "../helpers/temp.ts";
import { startOtlpReceiver } from "./otlp-receiver.ts";

// Real processes on PostgreSQL, each with the documented SDK setup (examples/tracing/otel-setup.mjs,
// loaded with --import) exporting OTLP/HTTP JSON to a receiver on loopback: an ingest process
// stores the event with its webhook.receive span's traceparent, a worker process claims it and
// forwards it, and the worker's delivery.attempt is a child of the ingest's span: one trace id
// from the provider's request to the destination's answer.

const cluster = useCluster();
const setup = pathToFileURL(join(repoRoot, "examples/tracing/otel-setup.mjs")).href;
const bodyMarker = "iban-DE89-body-only";
const server = { SERVER: 2, CONSUMER: 5, CLIENT: 3 };

it("PostgreSQL, ingest and worker processes: the worker's delivery.attempt joins the ingest's trace; nothing secret is exported", {
  timeout: 120_000,
}, async () => {
  const otlp = await startOtlpReceiver();
  const app = await startReceiver();
  try {
    const configPath = join(cluster.tmp.dir, "traced.json");
    writeFileSync(
      configPath,
      JSON.stringify({
        store: cluster.database.schemaUrl(),
        log: { level: "warn" },
        tracing: { enabled: true },
        sources: { std: { provider: "standard-webhooks", secrets: [secrets.standard] } },
        destinations: {
          app: { url: app.url, secret: destinationSecret, allowPrivateNetworks: true },
        },
        routes: [{ from: "std", to: "app" }],
        worker: { pollInterval: "50ms" },
      }),
    );
    const env = {
      NODE_OPTIONS: `--import ${setup}`,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otlp.url,
      OTEL_BSP_SCHEDULE_DELAY: "50",
    };
    const args = ["start", "--config", configPath, "--role"];
    const ingest = await spawnCommand(cluster.tmp.dir, [...args, "ingest", "--port", "0"], env);
    cluster.processes.push(ingest);
    const worker = await spawnCommand(cluster.tmp.dir, [...args, "worker"], env, {
      ready: /hookinbox worker (\S+) running/,
    });
    cluster.processes.push(worker);

    const answer = await postEvent(ingest.url, "msg_otlp_1", {
      type: "order.created",
      note: bodyMarker,
    });
    expect(answer.status).toBe(200);
    await until(() => app.requests.length === 1, 30_000, "the forward");
    const hookinbox = () => otlp.spans.filter((s) => s.scope === "hookinbox");
    await until(() => hookinbox().length === 3, 30_000, "three exported hookinbox spans");

    const receive = hookinbox().filter((s) => s.name === "webhook.receive");
    const attempt = hookinbox().filter((s) => s.name === "delivery.attempt");
    const post = hookinbox().filter((s) => s.name === "POST");
    expect([receive.length, attempt.length, post.length]).toEqual([1, 1, 1]);
    const [r, a, p] = [receive[0]!, attempt[0]!, post[0]!];
    // Two processes, two exporters: the receive span and the attempt came in different requests.
    expect(r.request).not.toBe(a.request);
    expect(r.kind).toBe(server.SERVER);
    expect(a.kind).toBe(server.CONSUMER);
    expect(p.kind).toBe(server.CLIENT);
    expect(r.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(a.traceId).toBe(r.traceId);
    expect(a.parentSpanId).toBe(r.spanId);
    expect(p.traceId).toBe(r.traceId);
    expect(p.parentSpanId).toBe(a.spanId);
    expect(app.requests[0]!.headers.traceparent).toBe(`00-${r.traceId}-${p.spanId}-01`);
    expect(r.attributes).toMatchObject({
      "hookinbox.source": "std",
      "hookinbox.event.type": "order.created",
      "hookinbox.outcome": "stored",
      "hookinbox.duplicate": false,
      "http.response.status_code": 200,
    });
    expect(a.attributes).toMatchObject({
      "hookinbox.target": "app",
      "hookinbox.event.id": r.attributes["hookinbox.event.id"],
      "hookinbox.attempt": 1,
      "hookinbox.outcome": "done",
    });
    expect(otlp.contentTypes.every((t) => t.startsWith("application/json"))).toBe(true);

    const exported = otlp.bodies.join("\n");
    for (const secret of [
      bodyMarker,
      secrets.standard.replace(/^whsec_/, ""),
      destinationSecret.replace(/^whsec_/, ""),
      app.requests[0]!.headers["webhook-signature"]!.slice(3, 20),
    ]) {
      expect(exported.includes(secret)).toBe(false);
    }
  } finally {
    await Promise.all([otlp.close(), app.close()]);
  }
});
