import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isHookinboxError } from "../../src/errors.ts";
import { openStore, parseStoreUrl } from "../../src/store/index.ts";
import { acceptInput } from "./conformance.ts";

const tempRoot = mkdtempSync(join(tmpdir(), "hookinbox-open-store-"));
afterAll(() => rmSync(tempRoot, { recursive: true, force: true }));

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

describe("parseStoreUrl / openStore", () => {
  it("parses relative, absolute and in-memory SQLite URLs", () => {
    expect(parseStoreUrl("sqlite:./.hookinbox/hookinbox.db")).toEqual({
      kind: "sqlite",
      path: "./.hookinbox/hookinbox.db",
    });
    expect(parseStoreUrl("sqlite:data/h.db")).toEqual({ kind: "sqlite", path: "data/h.db" });
    expect(parseStoreUrl("sqlite:/var/lib/hookinbox/h.db")).toEqual({
      kind: "sqlite",
      path: "/var/lib/hookinbox/h.db",
    });
    expect(parseStoreUrl("sqlite::memory:")).toEqual({ kind: "sqlite", path: ":memory:" });
  });

  it("recognises PostgreSQL URLs without connecting", () => {
    for (const url of ["postgres://u:p@localhost/db", "postgresql://localhost/db?schema=inbox"]) {
      expect(parseStoreUrl(url)).toEqual({ kind: "postgres", url });
    }
  });

  it("refuses anything else, naming the accepted forms", () => {
    for (const url of ["", "sqlite:", "mysql://db", "./h.db", "sqlite://host/h.db", "file:h.db"]) {
      const error = thrown(() => parseStoreUrl(url));
      expect(isHookinboxError(error, "HOOKINBOX_STORE_URL_INVALID"), url).toBe(true);
      expect((error as Error).message).toMatch(/sqlite:\.\/relative\/path\.db/);
    }
  });

  it("opens a working file store and a working in-memory store", async () => {
    const path = join(tempRoot, "sub", "h.db");
    for (const url of [`sqlite:${path}`, "sqlite::memory:"]) {
      const store = openStore(url);
      expect(store.kind).toBe("sqlite");
      await store.migrate();
      const result = await store.accept(acceptInput());
      expect(await store.getEvent(result.eventId)).not.toBeNull();
      await store.close();
    }
  });
});
