import { standardRequest } from "./signers.ts";

/** POSTs a correctly signed Standard Webhooks message to `url`'s `standard` source. */
export async function postStandard(url: string, id: string) {
  const request = standardRequest(id, JSON.stringify({ type: "user.created" }));
  const response = await fetch(`${url}/webhooks/standard`, {
    method: "POST",
    headers: request.headers,
    body: request.body,
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}
