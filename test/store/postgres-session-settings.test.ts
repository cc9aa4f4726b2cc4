// The store's connections turn JIT off (their statements are short and index-driven; compiling
// one took longer than running it), unless the URL's own `options` says otherwise.
import { afterEach, describe, expect, it } from "vitest";
import { createPool, parsePostgresUrl } from "../../src/store/postgres/connection.ts";
import { freshDatabase } from "../helpers/postgres.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function jitOf(url: string): Promise<string> {
  const pool = createPool(parsePostgresUrl(url), () => undefined);
  cleanups.push(() => pool.end());
  const { rows } = await pool.query<{ jit: string }>("SHOW jit");
  return rows[0]!.jit;
}

describe("PostgreSQL store connections", () => {
  it("run without JIT", async () => {
    const database = await freshDatabase();
    cleanups.push(() => database.cleanup());
    expect(await jitOf(database.url)).toBe("off");
  });

  it("keep the options the URL gives instead", async () => {
    const database = await freshDatabase();
    cleanups.push(() => database.cleanup());
    const url = new URL(database.url);
    url.searchParams.set("options", "-c jit=on");
    expect(await jitOf(url.toString())).toBe("on");
  });
});
