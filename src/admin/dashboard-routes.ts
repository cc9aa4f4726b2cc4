import type { z } from "zod";
import { dashboardOverview, dashboardSearch } from "../operations/dashboard.ts";
import type { Operation } from "../operations/operation.ts";
import type { OperationRoute } from "./route-table.ts";

const op = <S extends z.ZodObject, R>(operation: Operation<S, R>) =>
  operation as unknown as Operation;

/**
 * The dashboard's own admin routes (beside the rest of the API, same authentication):
 * `GET /api/dashboard/overview?minutes=60` and `GET /api/dashboard/search?q=<event id or dedup key>`.
 *
 * @example
 * ```ts
 * const routes = [...operationRoutes, ...dashboardRoutes];
 * ```
 */
export const dashboardRoutes: readonly OperationRoute[] = [
  { method: "GET", path: "/api/dashboard/overview", operation: op(dashboardOverview) },
  { method: "GET", path: "/api/dashboard/search", operation: op(dashboardSearch) },
];
