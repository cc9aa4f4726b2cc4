import { z } from "zod";
import { sessionPathItem, sessionSecuritySchemes } from "./openapi-session.ts";
import { type AdminRouteEntry, isReadRoute, pathParams } from "./route-table.ts";

/** JSON Schema 2020-12 (OpenAPI 3.1's dialect) of what a request may carry, before parsing. */
type JsonSchema = {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  [key: string]: unknown;
};

function inputSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    io: "input",
    unrepresentable: "any",
    target: "draft-2020-12",
  }) as JsonSchema;
  return rest;
}

const errorContent = {
  "application/json": { schema: { $ref: "#/components/schemas/Error" } },
};

const errorResponses = {
  "400": {
    description: "invalid input (HOOKINBOX_QUERY_INVALID names the field and its constraint)",
    content: errorContent,
  },
  "401": {
    description: "missing or wrong bearer token (HOOKINBOX_ADMIN_UNAUTHORIZED)",
    content: errorContent,
  },
  "404": { description: "no such resource or route", content: errorContent },
  "503": {
    description:
      "the admin API is off or the store is unavailable; on the event stream, admin.maxStreams are open (HOOKINBOX_STREAM_LIMITED)",
    content: errorContent,
  },
};

/** What a write route answers the read-only token (`admin.readToken`). */
const readOnlyResponse = {
  "403": {
    description: "the read-only token may not change anything (HOOKINBOX_ADMIN_READ_ONLY)",
    content: errorContent,
  },
};

/** One route as an OpenAPI operation object. */
function operationObject(route: AdminRouteEntry) {
  const inPath = pathParams(route.path);
  if ("raw" in route) {
    const query = route.query ? inputSchema(route.query) : null;
    const parameters = Object.entries(query?.properties ?? {}).map(([name, property]) => ({
      name,
      in: "query",
      required: query?.required?.includes(name) ?? false,
      ...(typeof property.description === "string" ? { description: property.description } : {}),
      schema: property,
    }));
    return {
      operationId: route.path.replace(/^\/api\//, "").replace(/\W+/g, "."),
      summary: route.summary,
      ...(parameters.length > 0 ? { parameters } : {}),
      responses: {
        "200": { description: "OK", content: { [route.contentType]: {} } },
        ...errorResponses,
      },
    };
  }
  const schema = inputSchema(route.operation.input);
  const properties = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  const parameters = Object.entries(properties)
    .filter(([name]) => route.method === "GET" || inPath.includes(name))
    .map(([name, property]) => ({
      name,
      in: inPath.includes(name) ? "path" : "query",
      required: inPath.includes(name) || required.has(name),
      ...(typeof property.description === "string" ? { description: property.description } : {}),
      schema: property,
    }));
  const bodyProperties = Object.fromEntries(
    Object.entries(properties).filter(([name]) => !inPath.includes(name)),
  );
  const requestBody =
    route.method === "POST" && Object.keys(bodyProperties).length > 0
      ? {
          required: [...required].some((name) => !inPath.includes(name)),
          content: {
            "application/json": {
              schema: {
                ...schema,
                properties: bodyProperties,
                required: [...required].filter((name) => !inPath.includes(name)),
              },
            },
          },
        }
      : undefined;
  return {
    operationId: route.operation.name,
    summary: route.operation.summary,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: {
      [String(route.status ?? 200)]: {
        description: route.status === 201 ? "Created" : "OK",
        content: { "application/json": {} },
      },
      ...errorResponses,
      ...(isReadRoute(route) ? {} : readOnlyResponse),
    },
  };
}

/**
 * The admin API as an OpenAPI 3.1 document, generated from the route table and the zod schemas
 * that validate each request (one source: a constraint changes in both at once). Every route
 * needs the bearer token, except `/api/session` (the dashboard's sign-in, cookie and CSRF).
 *
 * @example
 * ```ts
 * const doc = openApiDocument(adminRoutes);
 * doc.paths["/api/events"].get.parameters; // limit, cursor, source, …
 * ```
 */
export function openApiDocument(routes: readonly AdminRouteEntry[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    paths[route.path] ??= {};
    paths[route.path]![route.method.toLowerCase()] = operationObject(route);
  }
  paths["/api/session"] = sessionPathItem();
  return {
    openapi: "3.1.0",
    info: {
      title: "hookinbox admin API",
      version: "1",
      description:
        "Events, deliveries, dead letters, replays, effects, stuck work, destinations and the audit log of a hookinbox inbox. Errors are `{ error: { code, message } }` with a stable code (docs/errors.md).",
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description:
            "the admin token (`admin.token` in the config), or the read-only `admin.readToken` for GET routes and the event stream",
        },
        ...sessionSecuritySchemes,
      },
      schemas: {
        Error: {
          type: "object",
          required: ["error"],
          properties: {
            error: {
              type: "object",
              required: ["code", "message"],
              properties: { code: { type: "string" }, message: { type: "string" } },
            },
          },
        },
      },
    },
  };
}
