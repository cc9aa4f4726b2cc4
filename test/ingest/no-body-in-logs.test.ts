import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spawnGateway } from "../helpers/gateway-process.ts";
import { githubRequest, secrets, stripeRequest, testSources } from "../helpers/signers.ts";
import { tempDir } from "../helpers/temp.ts";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const marker = "MARKER-7f3a9c-never-log-me";

describe("logging", () => {
  it("never writes a body, a secret or a signature to stdout or stderr, whatever the outcome", async () => {
    const gateway = await spawnGateway(tmp.dir, {
      store: `sqlite:${join(tmp.dir, "logs.db")}`,
      http: { bodyLimit: "8kb" },
      log: { level: "trace" },
      sources: testSources,
    });
    const post = (source: string, request: { body: string; headers: Record<string, string> }) =>
      fetch(`${gateway.url}/webhooks/${source}`, { method: "POST", ...request }).then(
        (r) => r.status,
      );
    const signed = stripeRequest("evt_marker", { extra: { note: marker } });
    const statuses = [
      await post("stripe", signed), // stored
      await post("stripe", signed), // duplicate
      await post("stripe", { ...signed, body: signed.body.replace(marker, `${marker}!`) }), // bad signature
      await post(
        "stripe",
        stripeRequest("evt_wrong_secret", { secret: "whsec_wrong", extra: { note: marker } }),
      ),
      await post("unknown", signed), // unknown source
      await post("stripe", stripeRequest("evt_big", { extra: { note: marker.repeat(400) } })), // too large
      await post("github", await githubRequest("d-marker", `{"note":"${marker}"}`)), // stored
      await post("github", {
        ...(await githubRequest("d-marker-2", "not json")),
        body: `${marker} not json`,
      }),
    ];
    expect(statuses).toEqual([200, 200, 401, 401, 404, 413, 200, 401]);
    gateway.child.kill("SIGTERM");
    await gateway.exited();
    const { stdout, stderr } = gateway.output();
    const everything = stdout + stderr;
    // The log did run: one JSON line per request with the outcome.
    const lines = stdout
      .trim()
      .split("\n")
      .filter((l) => l.includes('"webhook"'));
    expect(lines.map((l) => JSON.parse(l).outcome)).toEqual([
      "stored",
      "duplicate",
      "rejected",
      "rejected",
      "rejected",
      "rejected",
      "stored",
      "rejected",
    ]);
    expect(everything).not.toContain(marker);
    for (const secret of Object.values(secrets)) expect(everything).not.toContain(secret);
    expect(everything).not.toContain(signed.headers["stripe-signature"]!.split("v1=")[1]!);
  });
});
