import { useState } from "preact/hooks";
import type { StuckReport } from "../../../src/store/queue-types.ts";
import { ApiError, api } from "../api.ts";
import { addPlans, BulkConfirm, type BulkPlan } from "../bulk-plan.tsx";
import { stamp } from "../format.ts";
import { RunbookView } from "../runbook.tsx";
import type { Delivery, Effect, Page } from "../types.ts";
import { describe, useLoad } from "../use-load.ts";

type Stuck = Pick<StuckReport, "expiredLeases" | "abandoned" | "blockedKeys" | "oldUndone">;

const chunk = 50;
/** Ids per dry run of a selection (the API takes up to 500). */
const planChunk = 500;
/** Dead letters per page: the first page refreshes every 10 s, "load more" appends the next. */
const pageSize = 100;

/**
 * Dead letters, newest first, 100 a page with "load more" (retry one, or bulk retry of the
 * selection or of every dead letter: a dry run counts what it would retry, per target, before the
 * confirmation; a runbook that says "not safe" asks for an explicit override), held effects
 * (resolve) and stuck work.
 *
 * @example
 * ```tsx
 * <DeadLetters />
 * ```
 */
export function DeadLetters() {
  const dead = useLoad(
    () => api<Page<Delivery>>(`deliveries?status=dead&limit=${pageSize}`),
    [],
    10_000,
  );
  // Pages loaded with "load more", after the first one, and the cursor after the last of them.
  const [more, setMore] = useState<{ items: Delivery[]; nextCursor: string | null } | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const held = useLoad(() => api<{ items: Effect[] }>("effects?status=held"), [], 10_000);
  const stuck = useLoad(() => api<Stuck>("stuck?olderThan=1h"), [], 10_000);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [progress, setProgress] = useState<{ done: number; total: number; retried: number } | null>(
    null,
  );
  // A bulk retry the server refused as not safe, and how to run it again with the override.
  const [unsafe, setUnsafe] = useState<{
    message: string;
    run: (override: boolean) => Promise<void>;
  } | null>(null);
  // The dry run of the bulk retry about to be confirmed, and what confirming runs.
  const [confirming, setConfirming] = useState<{
    plan: BulkPlan;
    run: (override: boolean) => Promise<void>;
  } | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const first = dead.data?.items ?? [];
  const firstIds = new Set(first.map((d) => d.id));
  // A row the refreshed first page already holds is not shown twice.
  const items = [...first, ...(more?.items ?? []).filter((d) => !firstIds.has(d.id))];
  const nextCursor = more ? more.nextCursor : (dead.data?.nextCursor ?? null);
  const loadMore = async () => {
    if (!nextCursor) return;
    setLoadingMore(true);
    try {
      const page = await api<Page<Delivery>>(
        `deliveries?status=dead&limit=${pageSize}&cursor=${encodeURIComponent(nextCursor)}`,
      );
      setMore({ items: [...(more?.items ?? []), ...page.items], nextCursor: page.nextCursor });
    } catch (failure) {
      setMessage(describe(failure));
    } finally {
      setLoadingMore(false);
    }
  };
  /** After a retry the list changed under the loaded pages: start again from the first. */
  const reloadDead = async () => {
    setMore(null);
    await dead.reload();
  };

  const toggle = (id: string) => {
    const next = new Set(selected);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setSelected(next);
  };
  const retryOne = async (id: string) => {
    try {
      await api(`deliveries/${encodeURIComponent(id)}/retry`, { method: "POST" });
      setMessage(`Retried ${id}.`);
      await reloadDead();
    } catch (failure) {
      setMessage(describe(failure));
    }
  };
  /** Counts the selection's retry per target (dry run), then asks for confirmation. */
  const planSelected = async () => {
    const ids = [...selected];
    try {
      const plans: BulkPlan[] = [];
      for (let i = 0; i < ids.length; i += planChunk) {
        plans.push(
          await api<BulkPlan>("deliveries/retry", {
            method: "POST",
            body: { ids: ids.slice(i, i + planChunk), dryRun: true },
          }),
        );
      }
      setConfirming({ plan: addPlans(plans), run: bulkRetry });
    } catch (failure) {
      setMessage(describe(failure));
    }
  };
  /** Counts a retry of every dead letter per target (dry run), then asks for confirmation. */
  const planAll = async () => {
    try {
      const plan = await api<BulkPlan>("dead-letters/retry", {
        method: "POST",
        body: { all: true, dryRun: true },
      });
      setConfirming({ plan, run: retryAll });
    } catch (failure) {
      setMessage(describe(failure));
    }
  };
  const retryAll = async (override: boolean) => {
    setUnsafe(null);
    try {
      const result = await api<{ retried: number; skipped: number }>("dead-letters/retry", {
        method: "POST",
        body: { all: true, override },
      });
      setMessage(`Retried ${result.retried} dead letters.`);
      setSelected(new Set());
      await reloadDead();
    } catch (failure) {
      if (failure instanceof ApiError && failure.code === "HOOKINBOX_UNSAFE_TO_REPROCESS") {
        setUnsafe({ message: failure.message, run: retryAll });
      } else setMessage(describe(failure));
    }
  };
  const bulkRetry = async (override: boolean) => {
    setUnsafe(null);
    const ids = [...selected];
    let retried = 0;
    setProgress({ done: 0, total: ids.length, retried });
    for (let i = 0; i < ids.length; i += chunk) {
      try {
        const result = await api<{ retried: number; skipped: number }>("deliveries/retry", {
          method: "POST",
          body: { ids: ids.slice(i, i + chunk), override },
        });
        retried += result.retried;
        setProgress({ done: Math.min(ids.length, i + chunk), total: ids.length, retried });
      } catch (failure) {
        if (failure instanceof ApiError && failure.code === "HOOKINBOX_UNSAFE_TO_REPROCESS") {
          setUnsafe({ message: failure.message, run: bulkRetry });
        } else setMessage(describe(failure));
        setProgress(null);
        return;
      }
    }
    setMessage(`Retried ${retried} of ${ids.length}.`);
    setSelected(new Set());
    await reloadDead();
  };
  const resolve = async (id: string, resolution: "done" | "release") => {
    try {
      await api(`effects/${encodeURIComponent(id)}/resolve`, {
        method: "POST",
        body: { resolution },
      });
      await held.reload();
    } catch (failure) {
      setMessage(describe(failure));
    }
  };

  return (
    <div>
      <h2>Dead letters</h2>
      {dead.error && <p class="error">{dead.error}</p>}
      <div class="actions">
        <button
          type="button"
          disabled={selected.size === 0 || progress !== null}
          onClick={() => void planSelected()}
          data-testid="bulk-retry"
        >
          Retry selected ({selected.size})
        </button>
        <button
          type="button"
          disabled={items.length === 0 || progress !== null}
          onClick={() => void planAll()}
          data-testid="retry-all"
        >
          Retry all dead letters
        </button>
        <button
          type="button"
          class="link"
          onClick={() => setSelected(new Set(items.map((d) => d.id)))}
        >
          select all
        </button>
        {progress && (
          <span data-testid="bulk-progress">
            <progress max={progress.total} value={progress.done} /> {progress.done}/{progress.total}
          </span>
        )}
        {message && (
          <span class="muted" data-testid="dead-message">
            {message}
          </span>
        )}
      </div>
      {confirming && (
        <BulkConfirm
          plan={confirming.plan}
          verb="retry"
          onConfirm={(override) => {
            const run = confirming.run;
            setConfirming(null);
            void run(override);
          }}
          onCancel={() => setConfirming(null)}
        />
      )}
      {unsafe && (
        <div class="modal" role="dialog" aria-modal="true">
          <div class="card">
            <p class="bad">{unsafe.message}</p>
            <p>Retry anyway?</p>
            <button
              type="button"
              onClick={() => void unsafe.run(true)}
              data-testid="override-retry"
            >
              Override and retry
            </button>{" "}
            <button type="button" class="link" onClick={() => setUnsafe(null)}>
              Cancel
            </button>
          </div>
        </div>
      )}
      <table class="card" data-testid="dead-table">
        <thead>
          <tr>
            <th />
            <th>Event</th>
            <th>Target</th>
            <th>Attempts</th>
            <th>Last error</th>
            <th>Runbook</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {dead.data && items.length === 0 && (
            <tr>
              <td colSpan={7} class="muted">
                No dead letters
              </td>
            </tr>
          )}
          {items.map((d) => (
            <tr data-testid="dead-row" data-delivery-id={d.id}>
              <td>
                <input type="checkbox" checked={selected.has(d.id)} onChange={() => toggle(d.id)} />
              </td>
              <td>
                <a href={`#/events/${encodeURIComponent(d.eventId)}`}>
                  {d.source}:{d.type ?? "—"}
                </a>
                <div class="muted small">{stamp(d.createdAt)}</div>
              </td>
              <td>{d.target}</td>
              <td class="num">{d.attempts}</td>
              <td class="error">{d.lastError ?? "—"}</td>
              <td>
                <RunbookView runbook={d.runbook} />
              </td>
              <td>
                <button
                  type="button"
                  class="small"
                  onClick={() => retryOne(d.id)}
                  data-testid="retry"
                >
                  Retry
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {nextCursor && (
        <div class="pager">
          <button
            type="button"
            disabled={loadingMore}
            onClick={() => void loadMore()}
            data-testid="dead-more"
          >
            Load more
          </button>{" "}
          <span class="muted">{items.length} shown</span>
        </div>
      )}

      <h2>Held effects</h2>
      <table class="card" data-testid="held-table">
        <tbody>
          {(held.data?.items ?? []).length === 0 && (
            <tr>
              <td class="muted">No effects held</td>
            </tr>
          )}
          {(held.data?.items ?? []).map((f) => (
            <tr>
              <td>
                <a href={`#/events/${encodeURIComponent(f.eventId)}`}>{f.eventId}</a>
              </td>
              <td>{f.target}</td>
              <td>
                <code>{f.name}</code>
              </td>
              <td>claimed {stamp(f.claimedAt)}</td>
              <td>
                <button type="button" class="small" onClick={() => resolve(f.id, "done")}>
                  It happened (done)
                </button>{" "}
                <button type="button" class="small" onClick={() => resolve(f.id, "release")}>
                  Run it again (release)
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>

      <h2>Stuck work</h2>
      {stuck.error && <p class="error">{stuck.error}</p>}
      <table class="card" data-testid="stuck-table">
        <tbody>
          {[...(stuck.data?.expiredLeases ?? []), ...(stuck.data?.abandoned ?? [])].map((d) => (
            <tr>
              <td>{d.status === "running" ? "lease expired / abandoned" : d.status}</td>
              <td>
                <a href={`#/events/${encodeURIComponent(d.eventId)}`}>{d.eventId}</a>
              </td>
              <td>{d.target}</td>
              <td class="error">{d.lastError ?? ""}</td>
            </tr>
          ))}
          {(stuck.data?.blockedKeys ?? []).map((k) => (
            <tr>
              <td>ordering key blocked</td>
              <td>
                <a href={`#/events/${encodeURIComponent(k.eventId)}`}>{k.eventId}</a>
              </td>
              <td>{k.target}</td>
              <td>
                {k.orderingKey}: {k.parked} parked
              </td>
            </tr>
          ))}
          {(stuck.data?.oldUndone ?? []).map((e) => (
            <tr>
              <td>undone for over 1 h ({e.status})</td>
              <td>
                <a href={`#/events/${encodeURIComponent(e.id)}`}>{e.id}</a>
              </td>
              <td>
                {e.source}:{e.type ?? "—"}
              </td>
              <td>{stamp(e.receivedAt)}</td>
            </tr>
          ))}
          {stuck.data &&
            stuck.data.expiredLeases.length +
              stuck.data.abandoned.length +
              stuck.data.blockedKeys.length +
              stuck.data.oldUndone.length ===
              0 && (
              <tr>
                <td class="muted">Nothing stuck</td>
              </tr>
            )}
        </tbody>
      </table>
    </div>
  );
}
