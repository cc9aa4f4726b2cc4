import type { Runbook } from "./types.ts";

/**
 * A runbook beside a failure: owner, whether reprocessing is safe, notes and link.
 *
 * @example
 * ```tsx
 * <RunbookView runbook={delivery.runbook} />
 * ```
 */
export function RunbookView(props: { runbook: Runbook | null }) {
  const r = props.runbook;
  if (!r) return <span class="muted">no runbook</span>;
  const safe =
    r.safeToReprocess === true
      ? "safe to reprocess"
      : r.safeToReprocess === false
        ? "NOT safe to reprocess"
        : "safety not stated";
  return (
    <div class="runbook" data-testid="runbook">
      <strong>{r.pattern}</strong> · owner {r.owner ?? "—"} ·{" "}
      <span class={r.safeToReprocess === false ? "bad" : ""}>{safe}</span>
      {r.notes && <div>{r.notes}</div>}
      {r.link && (
        <a href={r.link} target="_blank" rel="noreferrer noopener">
          runbook ↗
        </a>
      )}
    </div>
  );
}
