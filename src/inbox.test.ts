import { describe, expect, it } from "vitest";
import { createInbox } from "./inbox.ts";

describe("inbox routing", () => {
  it("routes plain and absolute-form webhook targets, and never throws on a malformed escape", async () => {
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
      [404, "HOOKINBOX_SOURCE_NOT_FOUND"],
      [404, "HOOKINBOX_SOURCE_NOT_FOUND"],
      [404, "HOOKINBOX_ROUTE_NOT_FOUND"],
    ]);
    await inbox.close();
  });
});
