// Import rules for src/, checked in CI by `npm run check:deps` (dependency-cruiser).
// Type-only imports count (tsPreCompilationDeps): a type circle still couples two modules, and
// `import type` is one edit away from a value import.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment:
        "Modules import each other, directly or through others: move the shared piece to the layer that owns it.",
      from: {},
      to: { circular: true },
    },
    {
      name: "inner-layers-not-to-outer",
      severity: "error",
      comment:
        "store, queue, ingest and providers are inner layers: they import nothing from admin/, cli/ or gateway/. Put what both need (e.g. metric interfaces) in the inner layer or a neutral module.",
      from: { path: "^src/(store|queue|ingest|providers)/" },
      to: { path: "^src/(admin|cli|gateway)/" },
    },
    {
      name: "not-to-unresolvable",
      severity: "error",
      comment: "An import the checker cannot resolve would hide circles behind it.",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".tsx", ".js", ".mjs", ".cjs", ".d.ts"],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
