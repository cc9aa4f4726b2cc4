// examples/nextjs-prisma-stripe copied into the run's consumer folder, its Prisma client
// generated and `next build` run there, once per run: by next-serverless.test.ts, or before it
// by `.ci/run`'s prebuild (prebuild-consumers.ts) while the shared test files run. The Prisma
// client is generated with a stub schema engine: `prisma generate` needs none, but would
// otherwise try to download one.
import { execFileSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "../helpers/temp.ts";
import { type ConsumerRoot, whileLocked } from "./consumer-root.ts";

const example = join(repoRoot, "examples/nextjs-prisma-stripe");

/** The built example: its folder and the `next` binary to start it with. */
export interface NextExample {
  readonly app: string;
  readonly next: string;
}

/**
 * Copies, generates and builds the example in `root` unless this run already did (a build that
 * failed left no marker: the next caller builds again, and throws what it fails with).
 *
 * @example
 * const { app, next } = buildNextExample(installConsumerRoot());
 */
export function buildNextExample(root: ConsumerRoot): NextExample {
  const app = join(root.dir, "nextjs-prisma-stripe");
  const next = join(root.dir, "node_modules/next/dist/bin/next");
  const marker = join(root.dir, "nextjs-prisma-stripe.built");
  whileLocked(
    root.dir,
    () => {
      if (existsSync(marker)) {
        console.log(`next example: reusing this run's build in ${app}`);
        return;
      }
      cpSync(example, app, {
        recursive: true,
        filter: (path) =>
          !/\/(node_modules|\.next|generated)(\/|$)/.test(path.slice(example.length)),
      });
      const stub = join(root.dir, "schema-engine-stub");
      writeFileSync(stub, "#!/bin/sh\necho 'no schema engine in this test' >&2\nexit 1\n");
      chmodSync(stub, 0o755);
      execFileSync(
        process.execPath,
        [join(root.dir, "node_modules/prisma/build/index.js"), "generate"],
        {
          cwd: app,
          env: {
            ...process.env,
            PRISMA_SCHEMA_ENGINE_BINARY: stub,
            PRISMA_HIDE_UPDATE_MESSAGE: "1",
          },
          stdio: ["ignore", "ignore", "pipe"],
        },
      );
      execFileSync(process.execPath, [next, "build"], {
        cwd: app,
        env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", HOOKINBOX_EXAMPLE_ROOT: root.dir },
        stdio: ["ignore", "ignore", "pipe"],
      });
      writeFileSync(marker, `${new Date().toISOString()}\n`);
    },
    "next-example",
  );
  return { app, next };
}
