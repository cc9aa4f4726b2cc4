import { describe, expect, it } from "vitest";
import { createInbox } from "./inbox.ts";

describe("inbox routing", () => {
  it("routes webhook targets, refuses absolute-form ones, and never throws on a malformed escape", async () => {
    const inbox = createInbox({ store: "sqlite::memory:", sources: {} }, { env: {} });
    const codes = [];
    for (const url of [
      "/webhooks/%E0",
      "http://h.example/webhooks/nope?x=1",
      "/webhooks/nope?x=1",
      "/nowhere",
    ]) {
      const response = await inbox.handle({
        method: "POST",
        url,
        headers: [],
        body: new Uint8Array(),
      });
      codes.push([
        response.status,
        (JSON.parse(response.body) as { error: { code: string } }).error.code,
      ]);
    }
    expect(codes).toEqual([
      [404, "HOOKINBOX_SOURCE_NOT_FOUND"],
      [400, "HOOKINBOX_REQUEST_TARGET_INVALID"],
      [404, "HOOKINBOX_SOURCE_NOT_FOUND"],
      [404, "HOOKINBOX_ROUTE_NOT_FOUND"],
    ]);
    await inbox.close();
  });
});

describe("inbox internal errors", () => {
  it("answers 500 HOOKINBOX_INTERNAL_ERROR with a request id when the store throws something unexpected", async () => {
    const inbox = createInbox(
      { store: "sqlite::memory:", sources: {} },
      { env: {}, adminToken: "unit-test-admin-token-5e1c9a7b3d2f80" },
    );
    await inbox.ready();
    inbox.store.listEvents = () => Promise.reject(new TypeError("boom"));
    const response = await inbox.handle({
      method: "GET",
      url: "/api/events",
      headers: [["authorization", "Bearer unit-test-admin-token-5e1c9a7b3d2f80"]],
      body: new Uint8Array(),
    });
    expect(response.status).toBe(500);
    expect(JSON.parse(response.body)).toEqual({
      error: {
        code: "HOOKINBOX_INTERNAL_ERROR",
        message: expect.stringMatching(/^Internal error: request id [0-9A-Z]{26}$/),
        requestId: expect.stringMatching(/^[0-9A-Z]{26}$/),
      },
    });
    await inbox.close();
  });
});
