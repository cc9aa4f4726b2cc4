// Precompiled sources for the processes a checkout starts (gateways by bin/hookinbox.mjs, test
// workers by bin/run-ts.mjs). Loading src/ through tsx costs about a second per process on
// Node 20: every module's resolve and load crosses to tsx's loader thread, and the suite starts
// hundreds of processes. The same modules compiled once by esbuild (test/compiled-sources-setup.ts
// does it at the start of every test run) load with no loader at all.
//
// A build is used only while every source it lists has the size and mtime it had, so an edit
// falls back to tsx at once. Each checkout has its own folder under
// node_modules/.cache/hookinbox-compiled/ (worktrees may share node_modules), and each build its
// own subfolder named in current.json, so a build never pulls files from under a running process.
//
// Each compiled module keeps its source's `import.meta.url` (migrations, the dashboard and the
// repository root resolve as from src/), except a module that starts a worker thread from its
// own folder, which needs its compiled neighbour.
import { createHash } from "node:crypto";
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const checkoutId = createHash("sha256").update(root).digest("hex").slice(0, 12);
const cache = join(root, "node_modules/.cache/hookinbox-compiled", checkoutId);
const pointer = join(cache, "current.json");
const folders = ["src", "test"];
/** Builds older than this are removed by the next build (no process lives that long in tests). */
const keepOldBuildsMs = 3 * 60 * 60 * 1000;

/** Every .ts module under the compiled folders, tests themselves excepted. */
function sources() {
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules") walk(path);
      } else if (
        entry.name.endsWith(".ts") &&
        !entry.name.endsWith(".test.ts") &&
        !entry.name.endsWith(".d.ts")
      )
        found.push(path);
    }
  };
  for (const folder of folders) walk(join(root, folder));
  return found;
}

let current;

/** The current build's folder and files when every source is unchanged, else null. */
function freshBuild() {
  if (current !== undefined) return current;
  current = null;
  if (process.env.HOOKINBOX_COMPILED_SOURCES === "off") return null;
  let build;
  try {
    build = JSON.parse(readFileSync(pointer, "utf8"));
  } catch {
    return null;
  }
  for (const [file, size, mtimeMs] of build.files) {
    let stat;
    try {
      stat = statSync(join(root, file));
    } catch {
      return null;
    }
    if (stat.size !== size || stat.mtimeMs !== mtimeMs) return null;
  }
  current = { dir: join(cache, build.id), files: new Set(build.files.map(([file]) => file)) };
  return current;
}

/**
 * The compiled module's file URL for a source (absolute path or file URL) of this checkout while
 * the build is fresh, else null (run it through tsx).
 *
 * @example
 * ```js
 * compiledUrl("/repo/src/cli/main.ts"); // "file:///repo/node_modules/.cache/…/src/cli/main.js" or null
 * ```
 */
export function compiledUrl(source) {
  const path = source.startsWith("file:") ? fileURLToPath(source) : source;
  const file = relative(root, path);
  if (!file.endsWith(".ts") || file.startsWith("..")) return null;
  const build = freshBuild();
  if (!build?.files.has(file)) return null;
  return pathToFileURL(join(build.dir, `${file.slice(0, -3)}.js`)).href;
}

/** Relative `./x.ts` specifiers become `./x.js`. */
function rewriteTsSpecifiers(text) {
  return text.replace(/(["'])(\.{1,2}\/[^"']+)\.ts\1/g, "$1$2.js$1");
}

/**
 * Compiles every source into a new build folder, then points current.json at it; returns how
 * many modules it compiled.
 *
 * @example
 * ```js
 * await compileSources(); // 433
 * ```
 */
export async function compileSources() {
  const { build } = await import("esbuild");
  const files = sources();
  const stamps = files.map((path) => {
    const stat = statSync(path);
    return [relative(root, path), stat.size, stat.mtimeMs];
  });
  const id = `${Date.now()}-${process.pid}`;
  mkdirSync(cache, { recursive: true });
  for (const entry of readdirSync(cache)) {
    const age = Date.now() - Number(entry.split("-")[0]);
    if (/^\d+-\d+$/.test(entry) && age > keepOldBuildsMs)
      rmSync(join(cache, entry), { recursive: true, force: true });
  }
  await build({
    entryPoints: files,
    outbase: root,
    outdir: join(cache, id),
    bundle: false,
    format: "esm",
    platform: "node",
    target: "node20",
    logLevel: "warning",
    plugins: [
      {
        name: "source-import-meta-url",
        setup(pluginBuild) {
          pluginBuild.onLoad({ filter: /\.ts$/ }, (args) => {
            let contents = readFileSync(args.path, "utf8");
            if (!contents.includes("new Worker("))
              contents = contents.replace(
                /\bimport\.meta\.url\b/g,
                JSON.stringify(pathToFileURL(args.path).href),
              );
            return { contents: rewriteTsSpecifiers(contents), loader: "ts" };
          });
        },
      },
    ],
  });
  writeFileSync(`${pointer}.${process.pid}`, JSON.stringify({ id, files: stamps }));
  renameSync(`${pointer}.${process.pid}`, pointer);
  return files.length;
}
