import { api, query } from "../api.ts";
import { stamp } from "../format.ts";
import type { Page, RejectedReceipt } from "../types.ts";
import { useLoad } from "../use-load.ts";

/**
 * Rejected requests: reason, source, remote address, time, header names (never values).
 *
 * @example
 * ```tsx
 * <Rejected params={new URLSearchParams()} />
 * ```
 */
export function Rejected(props: { params: URLSearchParams }) {
  const cursor = props.params.get("cursor") ?? undefined;
  const source = props.params.get("source") ?? undefined;
  const { data, error } = useLoad(
    () =>
      api<Page<RejectedReceipt>>(
        `receipts${query({ rejected: "true", source, cursor, limit: 50 })}`,
      ),
    [cursor, source],
  );
  return (
    <div>
      <h2>Rejected requests</h2>
      {error && <p class="error">{error}</p>}
      <table class="card" data-testid="rejected-table">
        <thead>
          <tr>
            <th>Time</th>
            <th>Source</th>
            <th>Reason</th>
            <th>Status</th>
            <th>Remote address</th>
            <th>Size</th>
            <th>Header names</th>
          </tr>
        </thead>
        <tbody>
          {data && data.items.length === 0 && (
            <tr>
              <td colSpan={7} class="muted">
                No rejected requests
              </td>
            </tr>
          )}
          {(data?.items ?? []).map((r) => (
            <tr data-testid="rejected-row">
              <td>{stamp(r.receivedAt)}</td>
              <td>{r.source}</td>
              <td>
                <code>{r.code ?? "—"}</code>
              </td>
              <td class="num">{r.status ?? "—"}</td>
              <td>{r.remoteAddress ?? "—"}</td>
              <td class="num">{r.size ?? "—"}</td>
              <td class="small">{(r.headerNames ?? []).join(", ")}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div class="pager">
        {cursor && (
          <button type="button" onClick={() => history.back()}>
            ← Newer
          </button>
        )}
        {data?.nextCursor && (
          <a class="button" href={`#/rejected${query({ source, cursor: data.nextCursor })}`}>
            Older →
          </a>
        )}
      </div>
    </div>
  );
}
