import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminRoutes } from "../../src/admin/admin-api.ts";
import { pathParams } from "../../src/admin/route-table.ts";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import { deliveryStatuses } from "../../src/operations/fields.ts";
import { secrets } from "../helpers/signers.ts";
import { tempDir } from "../helpers/temp.ts";

// GET /api/openapi.json over real HTTP: an OpenAPI 3.1 document generated from the route table
// and the zod schemas that validate requests. Structure checked here (every route, its path
// parameters, bearer auth), and a request refused by validation names the very constraint the
// document states.

const token = "openapi-test-token-0123456789abcdef";
let gateway: Gateway;
let tmp: ReturnType<typeof tempDir>;

beforeAll(async () => {
  tmp = tempDir();
  gateway = await startGateway(
    {
      store: `sqlite:${join(tmp.dir, "openapi.db")}`,
      sources: { std: { provider: "standard-webhooks", secrets: [secrets.standard] } },
      admin: { token },
    },
    { host: "127.0.0.1", port: 0, env: {}, metricsPort: null },
  );
});

afterAll(async () => {
  await gateway?.close();
  tmp?.cleanup();
});

async function api(method: string, path: string, body?: unknown) {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as any };
}

type Parameter = { name: string; in: string; required: boolean; schema: Record<string, any> };
type OperationObject = {
  operationId: string;
  summary: string;
  parameters?: Parameter[];
  requestBody?: { content: { "application/json": { schema: Record<string, any> } } };
  responses: Record<string, { description: string }>;
};

describe("GET /api/openapi.json", () => {
  let doc: any;
  beforeAll(async () => {
    const response = await api("GET", "/api/openapi.json");
    expect(response.status).toBe(200);
    doc = response.json;
  });

  it("needs the bearer token like every admin route", async () => {
    const response = await fetch(`${gateway.url}/api/openapi.json`);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe("Bearer");
  });

  it("is an OpenAPI 3.1 document with bearer auth on every operation", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(typeof doc.info.title).toBe("string");
    expect(typeof doc.info.version).toBe("string");
    expect(doc.jsonSchemaDialect).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(doc.components.securitySchemes).toEqual({
      bearerAuth: { type: "http", scheme: "bearer", description: expect.any(String) },
      sessionCookie: {
        type: "apiKey",
        in: "cookie",
        name: "hookinbox_session",
        description: expect.any(String),
      },
      csrfHeader: {
        type: "apiKey",
        in: "header",
        name: "x-hookinbox-csrf",
        description: expect.any(String),
      },
    });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    expect(Object.keys(doc).sort()).toEqual(
      ["components", "info", "jsonSchemaDialect", "openapi", "paths", "security"].sort(),
    );
  });

  it("lists every route of the route table once, with its path parameters and nothing else", () => {
    const operations: Array<[string, string, OperationObject]> = Object.entries(
      doc.paths as Record<string, Record<string, OperationObject>>,
    ).flatMap(([path, methods]) =>
      Object.entries(methods).map(
        ([method, op]) => [path, method, op] as [string, string, OperationObject],
      ),
    );
    // The route table's routes, and /api/session's three (handled beside the table).
    expect(operations.length).toBe(adminRoutes.length + 3);
    expect(adminRoutes.length).toBe(32);
    for (const route of adminRoutes) {
      const op = doc.paths[route.path]?.[route.method.toLowerCase()] as OperationObject;
      expect(op, `${route.method} ${route.path}`).toBeDefined();
      const inPath = (op.parameters ?? []).filter((p) => p.in === "path");
      expect(inPath.map((p) => p.name).sort()).toEqual(pathParams(route.path).sort());
      for (const p of inPath) expect(p.required).toBe(true);
      for (const p of op.parameters ?? []) {
        expect(["path", "query"]).toContain(p.in);
        expect(typeof p.schema).toBe("object");
      }
      if (route.method === "GET") expect(op.requestBody).toBeUndefined();
      for (const response of Object.values(op.responses))
        expect(typeof response.description).toBe("string");
      expect(op.responses["401"]).toBeDefined();
    }
    const ids = operations.map(([, , op]) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("describes /api/session: sign in without a bearer, show and sign out with the cookie", async () => {
    const session = doc.paths["/api/session"];
    expect(Object.keys(session).sort()).toEqual(["delete", "get", "post"]);
    expect(session.post.security).toEqual([]);
    expect(session.get.security).toEqual([{ sessionCookie: [] }]);
    expect(session.delete.security).toEqual([{ sessionCookie: [], csrfHeader: [] }]);
    expect(Object.keys(session.post.responses).sort()).toEqual(["201", "400", "401", "403"]);
    expect(Object.keys(session.delete.responses).sort()).toEqual(["204", "401", "403"]);
    const body = session.post.requestBody.content["application/json"].schema;
    expect(body).toMatchObject({ type: "object", required: ["token"] });
    expect(body.properties.token).toMatchObject({ type: "string", minLength: 1, maxLength: 4096 });
    // What the document says POST answers, the gateway answers.
    const signIn = await fetch(`${gateway.url}/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: gateway.url },
      body: JSON.stringify({ token }),
    });
    expect(signIn.status).toBe(201);
    expect(Object.keys((await signIn.json()) as object).sort()).toEqual(
      session.post.responses["201"].content["application/json"].schema.required.sort(),
    );
    expect(signIn.headers.get("set-cookie")).toMatch(/^hookinbox_session=/);
  });

  const param = (path: string, name: string) =>
    (doc.paths[path].get.parameters as Parameter[]).find((p) => p.name === name)!.schema;

  it("states the constraints a refused request names", async () => {
    const limit = param("/api/events", "limit");
    expect(limit).toMatchObject({ type: "integer", minimum: 1, maximum: 500 });
    const tooBig = await api("GET", `/api/events?limit=${limit.maximum + 1}`);
    expect(tooBig.status).toBe(400);
    expect(tooBig.json.error.code).toBe("HOOKINBOX_QUERY_INVALID");
    expect(tooBig.json.error.message).toContain(
      `limit must be an integer from ${limit.minimum} to ${limit.maximum}`,
    );

    const status = param("/api/deliveries", "status");
    expect(status.enum).toEqual([...deliveryStatuses]);
    const lost = await api("GET", "/api/deliveries?status=lost");
    expect(lost.status).toBe(400);
    expect(lost.json.error.message).toContain(`status must be one of ${status.enum.join(", ")}`);

    const ids =
      doc.paths["/api/deliveries/retry"].post.requestBody.content["application/json"].schema
        .properties.ids;
    expect(ids).toMatchObject({ type: "array", minItems: 1, maxItems: 500 });
    const none = await api("POST", "/api/deliveries/retry", { ids: [] });
    expect(none.status).toBe(400);
    expect(none.json.error.message).toContain(`ids must be ${ids.minItems} to ${ids.maxItems}`);

    const minutes = param("/api/dashboard/overview", "minutes");
    expect(minutes).toMatchObject({ type: "integer", minimum: 5, maximum: 1440 });
    const tiny = await api("GET", `/api/dashboard/overview?minutes=${minutes.minimum - 1}`);
    expect(tiny.status).toBe(400);
    expect(tiny.json.error.message).toContain(
      `minutes must be an integer from ${minutes.minimum} to ${minutes.maximum}`,
    );

    const resolution =
      doc.paths["/api/effects/{id}/resolve"].post.requestBody.content["application/json"].schema;
    expect(resolution.required).toEqual(["resolution"]);
    expect(resolution.properties.resolution.enum).toEqual(["done", "release"]);
    const wrong = await api("POST", "/api/effects/eff_1/resolve", { resolution: "maybe" });
    expect(wrong.status).toBe(400);
    expect(wrong.json.error.message).toContain('resolution must be "done"');
  });
});
