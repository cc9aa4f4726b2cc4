// Prisma on a pg pool hookinbox can join: inside a handler's ctx.transaction, withPrisma runs
// Prisma's queries on the delivery's own connection and transaction.
import { PrismaPg } from "@prisma/adapter-pg";
import { joinablePool } from "hookinbox/prisma";
import pg from "pg";
import { PrismaClient } from "../generated/prisma/client";

const globals = globalThis as { prisma?: PrismaClient };

/** One client per server process (route modules and hot reloads share it). */
export const prisma =
  globals.prisma ??
  new PrismaClient({
    adapter: new PrismaPg(joinablePool(pg, { connectionString: process.env.DATABASE_URL, max: 5 })),
  });
globals.prisma = prisma;
