import { mkdirSync } from "node:fs";
import { type GatewayProcess, spawnGateway } from "./gateway-process.ts";
import { secrets, standardRequest } from "./signers.ts";

/**
 * Starts three `hookinbox start` processes on one store, each in its own folder under `dir`,
 * with a Standard Webhooks source `std` and the given `audit` settings.
 *
 * @example
 * ```ts
 * const gateways = await spawnAuditGateways(tmp.dir, storeUrl, { key: SEED });
 * ```
 */
export async function spawnAuditGateways(
  dir: string,
  storeUrl: string,
  audit: Record<string, unknown>,
): Promise<GatewayProcess[]> {
  const config = {
    store: storeUrl,
    log: { level: "warn" },
    sources: { std: { provider: "standard-webhooks", secrets: [secrets.standard] } },
    audit,
  };
  const gateways: GatewayProcess[] = [];
  for (const n of [0, 1, 2]) {
    mkdirSync(`${dir}/g${n}`, { recursive: true });
    gateways.push(await spawnGateway(`${dir}/g${n}`, config));
  }
  return gateways;
}

/**
 * Posts one signed event to `std`; its event id on a 200, else null (a refused or dropped request).
 *
 * @example
 * ```ts
 * const eventId = await postForEventId(gateway.url, "msg_1", "audit.test");
 * ```
 */
export async function postForEventId(
  baseUrl: string,
  id: string,
  type: string,
): Promise<string | null> {
  const signed = standardRequest(id, JSON.stringify({ type, id }));
  try {
    const response = await fetch(`${baseUrl}/webhooks/std`, { method: "POST", ...signed });
    const json = (await response.json()) as { eventId?: string };
    return response.status === 200 && json.eventId ? json.eventId : null;
  } catch {
    return null;
  }
}
