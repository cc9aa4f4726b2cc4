import { z } from "zod";
import { csrfHeaderName, sessionCookieName } from "./session.ts";
import { signInBody } from "./session-routes.ts";

const errorContent = {
  "application/json": { schema: { $ref: "#/components/schemas/Error" } },
};

const sessionBody = {
  "application/json": {
    schema: {
      type: "object",
      required: ["csrfToken", "expiresAt"],
      properties: {
        csrfToken: { type: "string", description: `send it as ${csrfHeaderName} on every write` },
        expiresAt: { type: "string", format: "date-time" },
      },
    },
  },
};

const unauthorized = {
  description: "no valid session (HOOKINBOX_ADMIN_UNAUTHORIZED)",
  content: errorContent,
};
const csrfFailed = {
  description: `another origin, or a write without ${csrfHeaderName} (HOOKINBOX_CSRF_FAILED)`,
  content: errorContent,
};

/**
 * The security schemes of the dashboard's session: the cookie, and the CSRF header writes need.
 *
 * @example
 * ```ts
 * components.securitySchemes = { bearerAuth, ...sessionSecuritySchemes };
 * ```
 */
export const sessionSecuritySchemes = {
  sessionCookie: {
    type: "apiKey",
    in: "cookie",
    name: sessionCookieName,
    description: "the dashboard's session, set by POST /api/session (HttpOnly, SameSite=Strict)",
  },
  csrfHeader: {
    type: "apiKey",
    in: "header",
    name: csrfHeaderName,
    description: "the session's CSRF token, required with the cookie on every write",
  },
} as const;

/**
 * `/api/session` as OpenAPI path items (handled beside the route table, src/admin/session-routes.ts):
 * `POST` signs in with the admin token in the body (no bearer), `GET` returns the session's CSRF
 * token again, `DELETE` signs out.
 *
 * @example
 * ```ts
 * paths["/api/session"] = sessionPathItem();
 * ```
 */
export function sessionPathItem() {
  const { $schema: _dialect, ...body } = z.toJSONSchema(signInBody, {
    io: "input",
    target: "draft-2020-12",
  }) as Record<string, unknown>;
  return {
    post: {
      operationId: "session.create",
      summary:
        "sign the dashboard in: the admin token, sent once in the body, for the session cookie",
      security: [],
      requestBody: { required: true, content: { "application/json": { schema: body } } },
      responses: {
        "201": {
          description: "signed in; Set-Cookie carries the session",
          headers: { "Set-Cookie": { schema: { type: "string" } } },
          content: sessionBody,
        },
        "400": {
          description: "the body is not { token } (HOOKINBOX_QUERY_INVALID)",
          content: errorContent,
        },
        "401": { description: "wrong token (HOOKINBOX_ADMIN_UNAUTHORIZED)", content: errorContent },
        "403": csrfFailed,
      },
    },
    get: {
      operationId: "session.show",
      summary: "the signed-in page's CSRF token again (after a reload)",
      security: [{ sessionCookie: [] }],
      responses: {
        "200": { description: "OK", content: sessionBody },
        "400": {
          description: "a Bearer token has no dashboard session (HOOKINBOX_QUERY_INVALID)",
          content: errorContent,
        },
        "401": unauthorized,
      },
    },
    delete: {
      operationId: "session.delete",
      summary: "sign out: the cookie is cleared and the session revoked",
      security: [{ sessionCookie: [], csrfHeader: [] }],
      responses: {
        "204": { description: "signed out; Set-Cookie clears the cookie" },
        "401": unauthorized,
        "403": csrfFailed,
      },
    },
  };
}
