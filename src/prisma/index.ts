// hookinbox/prisma: Prisma 7 (with @prisma/adapter-pg) writing inside the transaction that marks
// a delivery done.
export { joinablePool } from "./joinable-pool.ts";
export { type PrismaTransactionClient, type WithPrismaOptions, withPrisma } from "./with-prisma.ts";
