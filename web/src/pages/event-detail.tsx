import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { base64Size, clock, latency, size, stamp } from "../format.ts";
import { HeadersTable } from "../headers-table.tsx";
import { RunbookView } from "../runbook.tsx";
import type { Delivery, Effect, EventDetail } from "../types.ts";
import { describe, useLoad } from "../use-load.ts";
import { TransformPreviews } from "./transform-previews.tsx";

function prettyBody(text: string | null): string | null {
  if (text === null) return null;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return null;
  }
}

function Receipts(props: { event: EventDetail }) {
  const { receipts } = props.event;
  return (
    <section class="card">
      <h3 data-testid="receipt-summary">
        Received {receipts.length} {receipts.length === 1 ? "time" : "times"}:{" "}
        {receipts.map((r) => clock(r.receivedAt)).join(", ")}
      </h3>
      <table data-testid="receipts-table">
        <thead>
          <tr>
            <th>#</th>
            <th>Received</th>
            <th>Kind</th>
            <th>Remote address</th>
            <th>Matched secret</th>
          </tr>
        </thead>
        <tbody>
          {receipts.map((r, i) => (
            <tr data-testid="receipt">
              <td class="num">{i + 1}</td>
              <td>{stamp(r.receivedAt)}</td>
              <td>{r.duplicate ? <span class="badge dup">duplicate</span> : "first"}</td>
              <td>{r.remoteAddress ?? "—"}</td>
              <td>{r.secretIndex === null ? "—" : `secret #${r.secretIndex + 1}`}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function DeliveryCard(props: { delivery: Delivery; onChanged: () => void }) {
  const d = props.delivery;
  const [message, setMessage] = useState<string | null>(null);
  const retry = async () => {
    try {
      await api(`deliveries/${encodeURIComponent(d.id)}/retry`, { method: "POST" });
      setMessage("Queued to run now.");
      props.onChanged();
    } catch (failure) {
      setMessage(describe(failure));
    }
  };
  const rescues = (d.attemptLog ?? []).filter((a) => a.outcome === "lease-expired").length;
  return (
    <section class="card delivery" data-testid="delivery" data-replay={String(d.isReplay)}>
      <h4>
        → {d.target} <span class={`status ${d.status}`}>{d.status}</span>
        {d.isReplay && (
          <span class="badge replay" data-testid="replay-flag">
            replay
          </span>
        )}{" "}
        <span class="muted">
          {d.attempts} attempt{d.attempts === 1 ? "" : "s"}
          {rescues > 0 ? ` · ${rescues} lease rescue${rescues === 1 ? "" : "s"}` : ""} · created{" "}
          {stamp(d.createdAt)}
        </span>
        {["dead", "pending", "blocked"].includes(d.status) && (
          <button type="button" class="small" onClick={retry}>
            Retry now
          </button>
        )}
      </h4>
      {message && <p class="muted">{message}</p>}
      {d.lastError && <p class="error">{d.lastError}</p>}
      {d.status === "dead" && <RunbookView runbook={d.runbook} />}
      <table>
        <thead>
          <tr>
            <th>#</th>
            <th>Outcome</th>
            <th>Started</th>
            <th>Latency</th>
            <th>Worker</th>
            <th>Error or response</th>
          </tr>
        </thead>
        <tbody>
          {(d.attemptLog ?? []).map((a) => (
            <tr data-testid="attempt">
              <td class="num">{a.attempt}</td>
              <td>
                <span class={`outcome ${a.outcome}`}>{a.outcome}</span>
              </td>
              <td>{stamp(a.startedAt)}</td>
              <td class="num">
                {a.response ? `${a.response.latencyMs} ms` : latency(a.startedAt, a.endedAt)}
              </td>
              <td>{a.workerId ?? "—"}</td>
              <td>
                {a.errorMessage && <div class="error">{a.errorMessage}</div>}
                {a.response?.filtered && <div data-testid="filtered">filtered: nothing sent</div>}
                {a.response && !a.response.filtered && (
                  <div>
                    HTTP {a.response.status ?? "—"}
                    {a.response.errorClass ? ` (${a.response.errorClass})` : ""}
                    {a.response.request && (
                      <span class="muted">
                        {" "}
                        · sent {size(a.response.request.bytes)}, sha256{" "}
                        {a.response.request.sha256.slice(0, 12)}…
                      </span>
                    )}
                    {a.response.body && <pre class="small">{a.response.body}</pre>}
                  </div>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/**
 * One event: the request as received (headers; body pretty and raw; size), its receipts with
 * duplicates marked, every delivery with every attempt, its effects, and replay.
 *
 * @example
 * ```tsx
 * <EventDetailPage id="evt_01…" />
 * ```
 */
export function EventDetailPage(props: { id: string }) {
  const id = encodeURIComponent(props.id);
  const event = useLoad(() => api<EventDetail>(`events/${id}`), [id]);
  const effects = useLoad(() => api<{ items: Effect[] }>(`effects?eventId=${id}`), [id]);
  const [raw, setRaw] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  if (event.error) return <p class="error">{event.error}</p>;
  const e = event.data;
  if (!e) return <p class="muted">Loading…</p>;
  const pretty = prettyBody(e.body.text);
  const bytes = base64Size(e.body.base64);
  const replay = async () => {
    setConfirming(false);
    try {
      const { deliveries } = await api<{ deliveries: Delivery[] }>(`events/${id}/replay`, {
        method: "POST",
        body: {},
      });
      setMessage(
        `Replayed: ${deliveries.length} new deliver${deliveries.length === 1 ? "y" : "ies"}.`,
      );
      await event.reload();
    } catch (failure) {
      setMessage(describe(failure));
    }
  };
  return (
    <div>
      <h2>
        {e.source} · {e.type ?? "(no type)"} <span class={`status ${e.status}`}>{e.status}</span>
      </h2>
      <dl class="facts card">
        <dt>Event id</dt>
        <dd>
          <code>{e.id}</code>
        </dd>
        <dt>Dedup key</dt>
        <dd>
          <code data-testid="dedup-key">{e.dedupKey}</code>
        </dd>
        <dt>First received</dt>
        <dd>{stamp(e.receivedAt)}</dd>
        <dt>Occurred</dt>
        <dd>{stamp(e.occurredAt)}</dd>
        <dt>Ordering key</dt>
        <dd>{e.orderingKey ?? "—"}</dd>
        <dt>Body size</dt>
        <dd data-testid="body-size">{size(bytes)}</dd>
      </dl>
      <div class="actions">
        <button type="button" onClick={() => setConfirming(true)} data-testid="replay">
          Replay…
        </button>
        {message && (
          <span class="muted" data-testid="replay-message">
            {message}
          </span>
        )}
      </div>
      {confirming && (
        <div class="modal" role="dialog" aria-modal="true">
          <div class="card">
            <p>
              Replay this event to its handlers? New deliveries are created and flagged as a replay;
              the originals stay as they are.
            </p>
            <RunbookView runbook={e.runbook} />
            <button type="button" onClick={replay} data-testid="confirm-replay">
              Replay
            </button>{" "}
            <button type="button" class="link" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        </div>
      )}
      <Receipts event={e} />
      <h3>Deliveries</h3>
      {e.deliveries.length === 0 && <p class="muted">Routed to no handler.</p>}
      {e.deliveries.map((d) => (
        <DeliveryCard delivery={d} onChanged={event.reload} />
      ))}
      <TransformPreviews id={id} />
      <section class="card">
        <h3>Effects</h3>
        <table data-testid="effects-table">
          <tbody>
            {(effects.data?.items ?? []).length === 0 && (
              <tr>
                <td class="muted">No effects recorded</td>
              </tr>
            )}
            {(effects.data?.items ?? []).map((f) => (
              <tr>
                <td>{f.target}</td>
                <td>
                  <code>{f.name}</code>
                </td>
                <td>
                  <span class={`status ${f.status}`}>{f.status}</span>
                </td>
                <td>{f.claims} claims</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section class="card">
        <h3>Headers</h3>
        <HeadersTable headers={e.headers} />
      </section>
      <section class="card">
        <h3>
          Body{" "}
          <button type="button" class="link" onClick={() => setRaw(!raw)}>
            {raw || pretty === null ? "show pretty" : "show raw"}
          </button>
        </h3>
        {e.purgedAt && <p class="muted">Payload purged at {stamp(e.purgedAt)}.</p>}
        <pre data-testid="body">
          {raw || pretty === null ? (e.body.text ?? `base64: ${e.body.base64}`) : pretty}
        </pre>
      </section>
    </div>
  );
}
