import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toFetchHandler } from "../../src/adapters/fetch.ts";
import { adminRoutes } from "../../src/admin/admin-api.ts";
import { isReadRoute } from "../../src/admin/route-table.ts";
import { readSse, type SseMessage } from "../../src/cli/listen-sse.ts";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import { createInbox } from "../../src/inbox.ts";
import { testAdminToken } from "../helpers/admin-token.ts";
import { freshDatabase } from "../helpers/postgres.ts";
import { secrets, standardRequest } from "../helpers/signers.ts";
import { tempDir } from "../helpers/temp.ts";

// GET /api/events/stream over real HTTP, on SQLite and on PostgreSQL: stored events after a
// cursor (Last-Event-ID, `after`, `since`), filters, then new ones; and the read-only token,
// which may read and stream but gets 403 HOOKINBOX_ADMIN_READ_ONLY on every route that writes.

const readToken = "stream-read-token-9d2c7e1b4a8f3065";

interface Streamed {
  id: string;
  source: string;
  type: string | null;
  receivedAt: string;
  headers: Array<[string, string]>;
  body: string;
}

describe.each(["sqlite", "postgres"] as const)("the event stream on %s", (kind) => {
  let gateway: Gateway;
  let cleanup: () => Promise<void> | void;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    let store: string;
    if (kind === "sqlite") {
      const tmp = tempDir();
      store = `sqlite:${join(tmp.dir, "stream.db")}`;
      cleanup = tmp.cleanup;
    } else {
      const db = await freshDatabase();
      store = db.url;
      cleanup = db.cleanup;
    }
    gateway = await startGateway(
      {
        store,
        sources: {
          a: { provider: "standard-webhooks", secrets: [secrets.standard] },
          b: { provider: "standard-webhooks", secrets: [secrets.standard] },
        },
        admin: { token: testAdminToken, readToken, maxStreams: 3 },
      },
      { host: "127.0.0.1", port: 0, env: {}, metricsPort: null },
    );
    for (const [name, source, type] of [
      ["a1", "a", "x"],
      ["b1", "b", "x"],
      ["a2", "a", "y"],
      ["a3", "a", "x"],
    ] as const)
      ids[name] = await send(gateway, source, name, type);
  });

  afterAll(async () => {
    await gateway?.close();
    await cleanup?.();
  });

  it("sends the stored events after Last-Event-ID in arrival order, filtered, then new ones, and never repeats one", async () => {
    const stream = await open(gateway, "?source=a&type=x&since=1h", readToken);
    expect(stream.status).toBe(200);
    expect(stream.contentType).toBe("text/event-stream; charset=utf-8");
    const first = await stream.take(2);
    expect(first.map((m) => m.data.id)).toEqual([ids.a1, ids.a3]);
    expect(first.map((m) => m.id)).toEqual([ids.a1, ids.a3]);
    expect(first[0]!.event).toBe("webhook");
    expect(first[0]!.data).toMatchObject({ source: "a", type: "x" });
    expect(Buffer.from(first[0]!.data.body, "base64").toString()).toBe(
      JSON.stringify({ type: "x", n: "a1" }),
    );
    expect(first[0]!.data.headers.some(([name]) => name === "webhook-signature")).toBe(true);
    const a4 = await send(gateway, "a", "a4", "x");
    await send(gateway, "b", "b2", "x");
    const a5 = await send(gateway, "a", "a5", "x");
    expect((await stream.take(2)).map((m) => m.data.id)).toEqual([a4, a5]);
    await stream.close();

    // A resume from the first event gets the rest of the filtered events, each once.
    const resumed = await open(gateway, "?source=a&type=x", readToken, ids.a1);
    expect((await resumed.take(3)).map((m) => m.data.id)).toEqual([ids.a3, a4, a5]);
    await resumed.close();
    // `after` is the same cursor in the query (EventSource cannot set headers on its first try).
    const after = await open(gateway, `?after=${a4}`, testAdminToken);
    const rest = await after.take(2);
    expect(rest.map((m) => m.data.id)).toEqual([(await lastIds(gateway, 2))[0], a5]);
    await after.close();
  });

  it("refuses a bad cursor or filter with a 400, and streams past admin.maxStreams with 503 HOOKINBOX_STREAM_LIMITED", async () => {
    const badId = await fetch(`${gateway.url}/api/events/stream`, {
      headers: { authorization: `Bearer ${readToken}`, "last-event-id": "nope" },
    });
    expect(badId.status).toBe(400);
    expect(((await badId.json()) as any).error.code).toBe("HOOKINBOX_CURSOR_INVALID");
    const badKey = await fetch(`${gateway.url}/api/events/stream?sorce=a`, {
      headers: { authorization: `Bearer ${readToken}` },
    });
    expect(badKey.status).toBe(400);
    expect(((await badKey.json()) as any).error.code).toBe("HOOKINBOX_QUERY_INVALID");
    const open3 = await Promise.all([1, 2, 3].map(() => open(gateway, "", readToken)));
    const fourth = await fetch(`${gateway.url}/api/events/stream`, {
      headers: { authorization: `Bearer ${readToken}` },
    });
    expect(fourth.status).toBe(503);
    expect(((await fourth.json()) as any).error.code).toBe("HOOKINBOX_STREAM_LIMITED");
    for (const stream of open3) await stream.close();
  });

  it("lets the read-only token read and stream, and refuses every route that writes with 403 HOOKINBOX_ADMIN_READ_ONLY", async () => {
    const writes = adminRoutes.filter((route) => !isReadRoute(route));
    expect(writes.length).toBe(10);
    for (const route of writes) {
      const path = route.path.replace(/\{[A-Za-z]+\}/g, ids.a1!);
      const response = await fetch(`${gateway.url}${path}`, {
        method: route.method,
        headers: { authorization: `Bearer ${readToken}`, "content-type": "application/json" },
        body: "{}",
      });
      expect([route.path, response.status]).toEqual([route.path, 403]);
      expect(((await response.json()) as any).error.code).toBe("HOOKINBOX_ADMIN_READ_ONLY");
    }
    // The dashboard's session is the admin token's alone.
    for (const method of ["POST", "GET", "DELETE"]) {
      const response = await fetch(`${gateway.url}/api/session`, {
        method,
        headers: { authorization: `Bearer ${readToken}` },
        ...(method === "POST" ? { body: JSON.stringify({ token: readToken }) } : {}),
      });
      expect([method, response.status]).toEqual([method, 403]);
    }
    // Every read route answers it as it answers the admin token.
    for (const route of adminRoutes.filter((r) => isReadRoute(r) && !r.path.endsWith("/stream"))) {
      const path = route.path.replace(/\{[A-Za-z]+\}/g, ids.a1!);
      const [asReader, asAdmin] = await Promise.all(
        [readToken, testAdminToken].map((token) =>
          fetch(`${gateway.url}${path}`, { headers: { authorization: `Bearer ${token}` } }).then(
            async (r) => {
              await r.arrayBuffer();
              return r.status;
            },
          ),
        ),
      );
      expect([route.path, asReader]).toEqual([route.path, asAdmin]);
    }
    // The admin token still writes.
    const replay = await fetch(`${gateway.url}/api/events/${ids.a1}/replay`, {
      method: "POST",
      headers: { authorization: `Bearer ${testAdminToken}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(replay.status).not.toBe(403);
  });

  it("lists the stream with its query parameters in the OpenAPI document", async () => {
    const doc = (await (
      await fetch(`${gateway.url}/api/openapi.json`, {
        headers: { authorization: `Bearer ${readToken}` },
      })
    ).json()) as any;
    const stream = doc.paths["/api/events/stream"].get;
    expect(stream.parameters.map((p: { name: string }) => p.name)).toEqual([
      "source",
      "type",
      "since",
      "after",
    ]);
    expect(Object.keys(stream.responses["200"].content)).toEqual(["text/event-stream"]);
    // Every write route documents the read-only token's 403; no read route does.
    for (const route of adminRoutes) {
      const responses = doc.paths[route.path][route.method.toLowerCase()].responses;
      expect([route.path, route.method, responses["403"] !== undefined]).toEqual([
        route.path,
        route.method,
        !isReadRoute(route),
      ]);
    }
  });
});

describe("the event stream on other hosts", () => {
  it("on PostgreSQL, a gateway's stream carries events another gateway accepted (its shared poll)", async () => {
    const db = await freshDatabase();
    const config = {
      store: db.url,
      sources: { a: { provider: "standard-webhooks", secrets: [secrets.standard] } },
      admin: { token: testAdminToken, readToken },
    };
    const options = { host: "127.0.0.1", port: 0, env: {}, metricsPort: null };
    const first = await startGateway(config, options);
    const second = await startGateway(config, options);
    try {
      const stream = await open(first, "", readToken);
      const ids = [
        await send(second, "a", "other-1", "x"),
        await send(first, "a", "own-1", "x"),
        await send(second, "a", "other-2", "x"),
      ];
      const got = await stream.take(3);
      expect(new Set(got.map((m) => m.data.id))).toEqual(new Set(ids));
      await stream.close();
    } finally {
      await first.close();
      await second.close();
      await db.cleanup();
    }
  });

  it("ends open streams when the gateway shuts down, so its drain does not wait for them", async () => {
    const tmp = tempDir();
    const gateway = await startGateway(
      {
        store: `sqlite:${join(tmp.dir, "drain.db")}`,
        sources: { a: { provider: "standard-webhooks", secrets: [secrets.standard] } },
        admin: { token: testAdminToken },
        // Far longer than the test's timeout: only ending the streams lets close() finish.
        http: { drainTimeout: "10m" },
      },
      { host: "127.0.0.1", port: 0, env: {}, metricsPort: null },
    );
    try {
      const response = await fetch(`${gateway.url}/api/events/stream`, {
        headers: { authorization: `Bearer ${testAdminToken}` },
      });
      expect(response.status).toBe(200);
      const messages: SseMessage[] = [];
      const read = (async () => {
        for await (const message of readSse(response.body as unknown as AsyncIterable<Uint8Array>))
          messages.push(message);
      })();
      await gateway.close();
      await read;
      expect(messages).toEqual([]);
    } finally {
      tmp.cleanup();
    }
  });

  it("streams through the fetch adapter, and answers 501 HOOKINBOX_STREAM_UNSUPPORTED to a host that cannot stream", async () => {
    const tmp = tempDir();
    const inbox = createInbox(
      {
        store: `sqlite:${join(tmp.dir, "hosts.db")}`,
        sources: { a: { provider: "standard-webhooks", secrets: [secrets.standard] } },
        admin: { token: testAdminToken },
      },
      { env: {} },
    );
    try {
      const auth = { authorization: `Bearer ${testAdminToken}` };
      const plain = await inbox.handle({
        method: "GET",
        url: "/api/events/stream",
        headers: auth,
        body: new Uint8Array(0),
      });
      expect(plain.status).toBe(501);
      expect(JSON.parse(plain.body).error.code).toBe("HOOKINBOX_STREAM_UNSUPPORTED");

      const handle = toFetchHandler(inbox);
      const signed = standardRequest("msg_fetch_1", JSON.stringify({ type: "x" }));
      const posted = await handle(
        new Request("http://inbox.test/webhooks/a", {
          method: "POST",
          headers: signed.headers,
          body: signed.body,
        }),
      );
      const { eventId } = (await posted.json()) as { eventId: string };
      const response = await handle(
        new Request("http://inbox.test/api/events/stream?since=1h", { headers: auth }),
      );
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
      const messages = readSse(response.body as unknown as AsyncIterable<Uint8Array>);
      let first: SseMessage | undefined;
      for await (const message of messages) {
        first = message;
        break;
      }
      expect(first?.id).toBe(eventId);
      expect(JSON.parse(first?.data ?? "{}").id).toBe(eventId);
    } finally {
      await inbox.close();
      tmp.cleanup();
    }
  });
});

async function send(gateway: Gateway, source: string, n: string, type: string): Promise<string> {
  const request = standardRequest(`msg_${source}_${n}`, JSON.stringify({ type, n }));
  const response = await fetch(`${gateway.url}/webhooks/${source}`, {
    method: "POST",
    headers: request.headers,
    body: request.body,
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { eventId: string }).eventId;
}

/** The ids of the newest `count` events, oldest first. */
async function lastIds(gateway: Gateway, count: number): Promise<string[]> {
  const response = await fetch(`${gateway.url}/api/events?limit=${count}`, {
    headers: { authorization: `Bearer ${testAdminToken}` },
  });
  const page = (await response.json()) as { items: Array<{ id: string }> };
  return page.items.map((e) => e.id).reverse();
}

/** Opens a stream; `take(n)` waits for the next n webhook messages. */
async function open(gateway: Gateway, query: string, token: string, lastEventId?: string) {
  const abort = new AbortController();
  const response = await fetch(`${gateway.url}/api/events/stream${query}`, {
    headers: {
      authorization: `Bearer ${token}`,
      ...(lastEventId ? { "last-event-id": lastEventId } : {}),
    },
    signal: abort.signal,
  });
  const messages = readSse(response.body as unknown as AsyncIterable<Uint8Array>);
  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    async take(n: number): Promise<Array<Omit<SseMessage, "data"> & { data: Streamed }>> {
      const out: Array<Omit<SseMessage, "data"> & { data: Streamed }> = [];
      while (out.length < n) {
        const next = await messages.next();
        if (next.done) throw new Error("the stream ended");
        if (next.value.event === "webhook")
          out.push({ ...next.value, data: JSON.parse(next.value.data) as Streamed });
      }
      return out;
    },
    async close() {
      abort.abort();
      await messages.return(undefined).catch(() => undefined);
    },
  };
}
