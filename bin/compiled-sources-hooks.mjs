// Module hooks (registered by bin/run-ts.mjs and bin/hookinbox.mjs) that load the compiled copy
// of a source from src/ or test/ wherever it is imported by its .ts path or URL (a config that
// imports src/index.ts by URL, say), so that one process never holds two copies of a module.
import { compiledUrl } from "./compiled-sources.mjs";

/** @type {import("node:module").ResolveHook} */
export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  const compiled = resolved.url.startsWith("file:") ? compiledUrl(resolved.url) : null;
  return compiled ? { url: compiled, format: "module", shortCircuit: true } : resolved;
}
