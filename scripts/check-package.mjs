#!/usr/bin/env node
// Packs the package (prepack builds it) and checks the tarball as a registry would see it:
// publint (package.json fields against the files) and @arethetypeswrong/cli (types resolve, in
// the right module format, for every subpath under node16 ESM, node16 CommonJS and bundlers).
//
//   node scripts/check-package.mjs            pack, then check
//   node scripts/check-package.mjs x.tgz      check a tarball packed before
//
// With HOOKINBOX_PACKED set to a folder, the tarball is packed there, where the consumer tests
// (test/package/) take it instead of packing again.
//
// attw's "node16" profile leaves out node10 resolution (moduleResolution "node"), which knows
// no `exports` and so cannot see subpaths such as `hookinbox/express`.
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const bin = (name) => join(root, "node_modules", ".bin", name);

/** Packs the package into a new temporary folder; returns the tarball's path. */
export function packTarball(
  destination = process.env.HOOKINBOX_PACKED || mkdtempSync(join(tmpdir(), "hookinbox-pack-")),
) {
  const out = execFileSync("npm", ["pack", "--json", "--pack-destination", destination], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const [{ filename }] = JSON.parse(out.slice(out.indexOf("[")));
  return join(destination, filename);
}

/** Runs publint and attw on a tarball; throws (with their output) when either fails. */
export function checkTarball(tarball) {
  const run = (command, args) =>
    execFileSync(command, args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  const publint = run(bin("publint"), ["run", tarball, "--strict"]);
  const attw = run(bin("attw"), [tarball, "--profile", "node16", "--format", "table-flipped"]);
  return { publint, attw };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const tarball = process.argv[2] ?? packTarball();
  try {
    const { publint, attw } = checkTarball(tarball);
    process.stdout.write(`${publint}\n${attw}\n${tarball}: publint and attw pass\n`);
  } catch (error) {
    process.stdout.write(`${error.stdout ?? ""}${error.stderr ?? ""}`);
    console.error(`check-package: ${tarball} fails publint or attw (output above)`);
    process.exit(1);
  }
}
