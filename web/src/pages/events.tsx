import { useState } from "preact/hooks";
import { api, query } from "../api.ts";
import { cursorBefore, stamp } from "../format.ts";
import type { EventSummary, Page } from "../types.ts";
import { describe, useLoad } from "../use-load.ts";

const statuses = ["", "pending", "done", "dead", "ignored", "received"];

/** Sets the hash query (filters live in the URL, so a page can be shared and reloaded). */
function go(params: Record<string, string>) {
  location.hash = `#/events${query(params)}`;
}

/**
 * Events, newest first: filter by source, type, status and a time range ("to" is a cursor,
 * "from" stops the paging), search by event id or dedup key, cursor paging.
 *
 * @example
 * ```tsx
 * <Events params={new URLSearchParams("status=dead")} />
 * ```
 */
export function Events(props: { params: URLSearchParams }) {
  const p = Object.fromEntries(props.params) as Record<string, string>;
  const [found, setFound] = useState<string[] | null>(null);
  const [searchError, setSearchError] = useState<string | null>(null);
  const from = p.from ? Date.parse(p.from) : null;
  const cursor = p.cursor ?? (p.to ? cursorBefore(Date.parse(p.to)) : undefined);
  const { data, error } = useLoad(
    () =>
      api<Page<EventSummary>>(
        `events${query({ source: p.source, type: p.type, status: p.status, limit: 50, cursor })}`,
      ),
    [p.source, p.type, p.status, cursor],
  );
  const items = (data?.items ?? []).filter(
    (e) => from === null || Date.parse(e.receivedAt) >= from,
  );
  const reachedFrom = data !== null && items.length < data.items.length;
  const applyFilters = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const next: Record<string, string> = {};
    for (const key of ["source", "type", "status", "from", "to"]) {
      const value = String(form.get(key) ?? "").trim();
      if (value) next[key] = value;
    }
    go(next);
  };
  const search = async (event: Event) => {
    event.preventDefault();
    const q = String(new FormData(event.currentTarget as HTMLFormElement).get("q") ?? "").trim();
    if (!q) return;
    try {
      const { eventIds } = await api<{ eventIds: string[] }>(`dashboard/search${query({ q })}`);
      setSearchError(null);
      if (eventIds.length === 1) location.hash = `#/events/${encodeURIComponent(eventIds[0]!)}`;
      else setFound(eventIds);
    } catch (failure) {
      setSearchError(describe(failure));
    }
  };
  const { cursor: _c, ...filters } = p;
  return (
    <div>
      <h2>Events</h2>
      <form class="filters card" onSubmit={search}>
        <input name="q" placeholder="Event id or provider event id / dedup key" size={44} />
        <button type="submit">Search</button>
        {searchError && <span class="error">{searchError}</span>}
        {found && (
          <span data-testid="search-results">
            {found.length === 0
              ? "No event has this id or dedup key."
              : found.map((id) => <a href={`#/events/${id}`}>{id} </a>)}
          </span>
        )}
      </form>
      <form class="filters card" onSubmit={applyFilters}>
        <input name="source" placeholder="source" value={p.source ?? ""} />
        <input name="type" placeholder="type" value={p.type ?? ""} />
        <select name="status" value={p.status ?? ""}>
          {statuses.map((s) => (
            <option value={s}>{s || "any status"}</option>
          ))}
        </select>
        <label>
          from <input name="from" type="datetime-local" step={1} value={p.from ?? ""} />
        </label>
        <label>
          to <input name="to" type="datetime-local" step={1} value={p.to ?? ""} />
        </label>
        <button type="submit">Filter</button>
      </form>
      {error && <p class="error">{error}</p>}
      <table class="card" data-testid="events-table">
        <thead>
          <tr>
            <th>Received</th>
            <th>Source</th>
            <th>Type</th>
            <th>Dedup key</th>
            <th>Status</th>
            <th>Receipts</th>
          </tr>
        </thead>
        <tbody>
          {items.map((e) => (
            <tr data-event-id={e.id}>
              <td>
                <a href={`#/events/${encodeURIComponent(e.id)}`}>{stamp(e.receivedAt)}</a>
              </td>
              <td>{e.source}</td>
              <td>{e.type ?? "—"}</td>
              <td>
                <code>{e.dedupKey}</code>
              </td>
              <td>
                <span class={`status ${e.status}`}>{e.status}</span>
              </td>
              <td class="num">{e.receiptCount}</td>
            </tr>
          ))}
          {data && items.length === 0 && (
            <tr>
              <td colSpan={6} class="muted">
                No events
              </td>
            </tr>
          )}
        </tbody>
      </table>
      <div class="pager">
        {p.cursor && (
          <button type="button" onClick={() => history.back()}>
            ← Newer
          </button>
        )}
        {data?.nextCursor && !reachedFrom && (
          <button type="button" onClick={() => go({ ...filters, cursor: data.nextCursor! })}>
            Older →
          </button>
        )}
      </div>
    </div>
  );
}
