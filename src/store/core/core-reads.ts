import type { Store } from "../types.ts";
import {
  type CoreDashboardReads,
  type CoreDestinationReads,
  dashboardReads,
} from "./dashboard-reads.ts";
import { type CoreDeliveryReads, deliveryReads } from "./delivery-reads.ts";
import { type CoreEventReads, eventReads } from "./event-reads.ts";
import type { ReadDriver } from "./read-driver.ts";
import { type CoreReportReads, reportReads } from "./report-reads.ts";
import { type CoreAuditReads, type CoreQueueReads, coreReads } from "./store-reads.ts";

/** Every Store method core implements over a driver's `rows` primitive (drivers leave them out). */
export type CoreStoreReads =
  | CoreAuditReads
  | CoreQueueReads
  | "eventsExpiredBefore"
  | CoreDeliveryReads
  | CoreEventReads
  | CoreReportReads
  | CoreDashboardReads
  | CoreDestinationReads;

/**
 * The Store's reads, each implemented once here over the driver's one read primitive: events,
 * receipts, deliveries, effects, reports, gauges, dashboard and destination reads, and the audit,
 * retention and queue reads of core/store-reads.ts. A driver spreads them into its Store and may
 * call them inside its own operations (a retry reads its delivery back).
 *
 * @example
 * ```ts
 * const reads = storeReads({ dialect: "postgres", table: (name) => t[name], rows });
 * await reads.getEvent("evt_…");
 * ```
 */
export function storeReads(driver: ReadDriver): Pick<Store, CoreStoreReads> {
  const deliveries = deliveryReads(driver);
  return {
    ...coreReads(driver),
    listDeliveries: deliveries.listDeliveries,
    deliveryById: deliveries.deliveryById,
    countDeliveryKinds: deliveries.countDeliveryKinds,
    ...eventReads(driver, deliveries.ofEvent),
    ...reportReads(driver, deliveries),
    ...dashboardReads(driver),
  };
}
