// Prisma clients for tests, generated offline from test/processing/fixtures/prisma/*.prisma into
// tmp/prisma-clients/ (gitignored). `prisma generate` needs no schema engine, but looks for one
// and would download it: PRISMA_SCHEMA_ENGINE_BINARY points at a stub that only says it is one.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { repoRoot } from "./temp.ts";

const clients = join(repoRoot, "tmp", "prisma-clients");

/** A stub schema engine: `prisma generate` never runs it, so it only has to exist. */
function schemaEngineStub(): string {
  const stub = join(clients, "schema-engine-stub.sh");
  if (!existsSync(stub)) {
    mkdirSync(clients, { recursive: true });
    writeFileSync(
      stub,
      '#!/bin/sh\necho "schema engine stub (tests generate offline)" >&2\nexit 1\n',
    );
    chmodSync(stub, 0o755);
  }
  return stub;
}

/**
 * Generates (once per schema content) the client of `fixtures/prisma/<schema>.prisma` and returns
 * its module: `PrismaClient` and the model types, untyped here (the tests give it a shape).
 *
 * @example
 * ```ts
 * const { PrismaClient } = await generatedPrismaClient("postgres");
 * ```
 */
export async function generatedPrismaClient(
  schema: "postgres" | "sqlite",
): Promise<{ PrismaClient: new (options: { adapter: unknown }) => unknown }> {
  const source = join(repoRoot, "test/processing/fixtures/prisma", `${schema}.prisma`);
  const text = readFileSync(source, "utf8");
  const hash = createHash("sha256").update(text).digest("hex").slice(0, 12);
  const dir = join(clients, `${schema}-${hash}`);
  const entry = join(dir, "client", "client.ts");
  if (!existsSync(entry)) {
    mkdirSync(dir, { recursive: true });
    copyFileSync(source, join(dir, "schema.prisma"));
    execFileSync(
      process.execPath,
      [
        join(repoRoot, "node_modules/prisma/build/index.js"),
        "generate",
        "--schema",
        "schema.prisma",
      ],
      {
        cwd: dir,
        stdio: ["ignore", "pipe", "pipe"],
        env: {
          ...process.env,
          PRISMA_SCHEMA_ENGINE_BINARY: schemaEngineStub(),
          CHECKPOINT_DISABLE: "1",
          PRISMA_HIDE_UPDATE_MESSAGE: "1",
        },
        timeout: 120_000,
      },
    );
  }
  return import(pathToFileURL(entry).href);
}
