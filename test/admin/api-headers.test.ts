// Every /api answer carries Cache-Control: no-store and X-Content-Type-Options: nosniff, over
// real HTTP against a gateway on loopback: a success and every error path (401, 404, 405, 400,
// 413, 429, a 503 from a real store failure, a 500 from the host adapter, and requests Node's HTTP parser refuses before
// hookinbox routes them).
import { join } from "node:path";
import Database from "better-sqlite3";
import { Agent, request as undiciRequest } from "undici";
import { afterAll, describe, expect, it } from "vitest";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import { rawExchange } from "../helpers/raw-http.ts";
import { tempDir } from "../helpers/temp.ts";

const token = "api-headers-test-token-0123456789abcdefghij";
const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function gateway(): Promise<{ gw: Gateway; file: string }> {
  const tmp = tempDir();
  cleanups.push(() => tmp.cleanup());
  const file = join(tmp.dir, "api.db");
  const gw = await startGateway(
    { store: `sqlite:${file}`, admin: { token }, http: { bodyLimit: "1kb" } },
    { host: "127.0.0.1", port: 0, env: {}, metricsPort: null },
  );
  cleanups.push(() => gw.close());
  return { gw, file };
}

interface Answer {
  status: number;
  code: string | undefined;
  cache: string | undefined;
  sniff: string | undefined;
}

/** The JSON error code of an answer body, if it has one. */
function errorCode(body: string): string | undefined {
  try {
    return (JSON.parse(body) as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
}

/** One request through undici on a fresh connection. */
async function send(
  gw: Gateway,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  const dispatcher = new Agent();
  try {
    const answer = await undiciRequest(new URL(path, gw.url), {
      method: method as "GET",
      headers: options.headers ?? {},
      body: options.body ?? null,
      dispatcher,
    });
    const header = (name: string) => {
      const value = answer.headers[name];
      return Array.isArray(value) ? value.join(", ") : value;
    };
    return {
      status: answer.statusCode,
      code: errorCode(await answer.body.text()),
      cache: header("cache-control"),
      sniff: header("x-content-type-options"),
    };
  } finally {
    await dispatcher.close();
  }
}

/** Status, code and the two headers of a raw answer (header names are case-insensitive). */
function rawAnswer(answer: { status: number | null; text: string }): Answer {
  const head = answer.text.split("\r\n\r\n")[0] ?? "";
  const header = (name: string) =>
    new RegExp(`^${name}: *(.*)$`, "im").exec(head)?.[1]?.trim() ?? undefined;
  return {
    status: answer.status ?? 0,
    code: errorCode(answer.text.slice(head.length + 4)),
    cache: header("cache-control"),
    sniff: header("x-content-type-options"),
  };
}

const auth = { authorization: `Bearer ${token}` };

describe("/api answers' headers", () => {
  it("every /api answer, success or error, says no-store and nosniff", async () => {
    const { gw, file } = await gateway();
    const answers: Answer[] = [
      await send(gw, "GET", "/api/events", { headers: auth }),
      await send(gw, "GET", "/api/events"),
      await send(gw, "GET", "/api/no-such-route", { headers: auth }),
      await send(gw, "DELETE", "/api/events", { headers: auth }),
      await send(gw, "GET", "/api/events?limit=9999", { headers: auth }),
      await send(gw, "POST", "/api/session", {
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ token: "x".repeat(2_000) }),
      }),
    ];
    // Requests Node's parser refuses before any route: a header line without a colon, and
    // headers over Node's 16 KB limit.
    answers.push(
      rawAnswer(
        await rawExchange(gw.url, "GET /api/events HTTP/1.1\r\nhost: x\r\nno colon here\r\n\r\n"),
      ),
      rawAnswer(
        await rawExchange(
          gw.url,
          `GET /api/events HTTP/1.1\r\nhost: x\r\nx-big: ${"a".repeat(20_000)}\r\n\r\n`,
        ),
      ),
    );
    // A real store failure under the gateway: the events table is renamed away, so reading
    // events fails in SQLite (503, the store is unavailable).
    const db = new Database(file);
    db.exec("ALTER TABLE events RENAME TO events_gone");
    db.close();
    answers.push(await send(gw, "GET", "/api/events", { headers: auth }));
    // Wrong Bearer tokens from this address: 10 answered 401, then 429 (so this comes late).
    for (let i = 0; i < 11; i++)
      answers.push(
        await send(gw, "GET", "/api/events", {
          headers: { authorization: `Bearer wrong-${i}` },
        }),
      );
    // A failure of the host adapter itself (the inbox's handler throws out of it): the Node
    // listener answers with inbox.internalError, 500 with a request id.
    gw.inbox.handle = () => Promise.reject(new Error("the inbox failed"));
    answers.push(await send(gw, "GET", "/api/events", { headers: auth }));

    expect(answers.map((a) => [a.status, a.code])).toEqual([
      [200, undefined],
      [401, "HOOKINBOX_ADMIN_UNAUTHORIZED"],
      [404, "HOOKINBOX_ROUTE_NOT_FOUND"],
      [405, "HOOKINBOX_METHOD_NOT_ALLOWED"],
      [400, "HOOKINBOX_QUERY_INVALID"],
      [413, "HOOKINBOX_BODY_TOO_LARGE"],
      [400, "HOOKINBOX_REQUEST_MALFORMED"],
      [431, "HOOKINBOX_HEADERS_TOO_LARGE"],
      [503, "HOOKINBOX_STORE_UNAVAILABLE"],
      ...Array.from({ length: 10 }, () => [401, "HOOKINBOX_ADMIN_UNAUTHORIZED"]),
      [429, "HOOKINBOX_ADMIN_AUTH_LIMITED"],
      [500, "HOOKINBOX_INTERNAL_ERROR"],
    ]);
    for (const answer of answers)
      expect({ ...answer, cache: answer.cache, sniff: answer.sniff }).toEqual({
        ...answer,
        cache: "no-store",
        sniff: "nosniff",
      });
  });
});
