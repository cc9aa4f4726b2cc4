// hookinbox reads its migrations from files beside its modules: it stays a Node.js package,
// outside the server bundle. The Prisma adapter stays outside too, on the same `pg` as the app.
const root = process.env.HOOKINBOX_EXAMPLE_ROOT; // the e2e test: node_modules in the parent folder

export default {
  serverExternalPackages: ["hookinbox", "@prisma/adapter-pg", "pg"],
  ...(root ? { outputFileTracingRoot: root, turbopack: { root } } : {}),
};
