import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../../test/helpers/temp.ts";
import { adminTokenPath, writeAdminTokenFile } from "./admin-token-file.ts";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe("the generated admin token's file", () => {
  it("sits beside the SQLite file, else under .hookinbox in the working directory", () => {
    expect(adminTokenPath("sqlite:./data/hookinbox.db", "/srv/app")).toBe(
      "/srv/app/data/admin-token",
    );
    expect(adminTokenPath("sqlite:/var/lib/hookinbox/db.sqlite", "/srv/app")).toBe(
      "/var/lib/hookinbox/admin-token",
    );
    expect(adminTokenPath("postgres://u@db:5432/app?schema=hookinbox", "/srv/app")).toBe(
      "/srv/app/.hookinbox/admin-token",
    );
    expect(adminTokenPath("sqlite::memory:", "/srv/app")).toBe("/srv/app/.hookinbox/admin-token");
  });

  it("replaces an earlier world-readable file with one only its owner reads, and removes it", () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    const path = join(tmp.dir, "fresh", "admin-token");
    writeAdminTokenFile(path, "first");
    writeFileSync(path, "stale\n");
    chmodSync(path, 0o644);
    expect(statSync(path).mode & 0o777).toBe(0o644);
    const remove = writeAdminTokenFile(path, "second");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(tmp.dir, "fresh")).mode & 0o777).toBe(0o700);
    expect(readFileSync(path, "utf8")).toBe("second\n");
    remove();
    expect(() => statSync(path)).toThrow();
  });
});
