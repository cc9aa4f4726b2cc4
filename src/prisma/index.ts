// hookinbox/prisma: Prisma 7 (@prisma/adapter-pg, or @prisma/adapter-better-sqlite3 with the
// inline writer) writing inside the transaction that marks a delivery done.
export { joinablePool } from "./joinable-pool.ts";
export { joinableSqlite } from "./joinable-sqlite.ts";
export { type PrismaTransactionClient, type WithPrismaOptions, withPrisma } from "./with-prisma.ts";
