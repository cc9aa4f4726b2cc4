import { api } from "../api.ts";
import { size } from "../format.ts";
import { HeadersTable } from "../headers-table.tsx";
import type { TargetPreview } from "../types.ts";
import { useLoad } from "../use-load.ts";

function Preview(props: { preview: TargetPreview }) {
  const p = props.preview;
  return (
    <div data-testid="transform-preview" data-target={p.target} data-outcome={p.outcome}>
      <h4>
        → {p.target}{" "}
        <span class="muted">
          {p.transforms.length > 0 ? p.transforms.join(" → ") : "no transform"}
        </span>
      </h4>
      {p.outcome === "filtered" && <p>Filtered: nothing would be sent.</p>}
      {p.outcome === "failed" && (
        <p class="error">
          {p.error?.code}: {p.error?.message}
        </p>
      )}
      {p.outcome === "send" && (
        <>
          <HeadersTable headers={Object.entries(p.headers ?? {})} />
          <p class="muted">
            {size(p.bytes ?? 0)}, sha256 {p.sha256}
          </p>
          <pre data-testid="preview-body">{p.body ?? `base64: ${p.base64}`}</pre>
        </>
      )}
    </div>
  );
}

/**
 * What each destination would be sent for this event now, through the current transforms (the
 * admin API's preview: nothing is sent). Shown only when the event has a destination.
 *
 * @example
 * ```tsx
 * <TransformPreviews id={encodeURIComponent(eventId)} />
 * ```
 */
export function TransformPreviews(props: { id: string }) {
  const load = useLoad(
    () => api<{ previews: TargetPreview[] }>(`events/${props.id}/preview`),
    [props.id],
  );
  const previews = load.data?.previews ?? [];
  if (load.error) return <p class="error">{load.error}</p>;
  if (previews.length === 0) return null;
  return (
    <section class="card" data-testid="transform-previews">
      <h3>Sent to destinations now (after transforms; a preview, nothing is sent)</h3>
      {previews.map((p) => (
        <Preview preview={p} />
      ))}
    </section>
  );
}
