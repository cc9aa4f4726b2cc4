import { useRef } from "preact/hooks";
import type { Overview } from "./types.ts";

/** One target's sampled counts, aligned with {@link Samples.at}. */
export interface TargetSamples {
  label: string;
  failing: number[];
  dead: number[];
}

/**
 * Gauges the store keeps no history of, sampled once per poll since the page opened: sample
 * times (ms), the oldest unprocessed delivery's age (s), and per source and target the failing
 * and dead deliveries.
 */
export interface Samples {
  readonly at: number[];
  readonly oldestAge: number[];
  readonly targets: ReadonlyMap<string, TargetSamples>;
}

/** Samples older than this (ms) before the newest one are dropped. */
export const sampleWindowMs = 60 * 60_000;

/** No samples yet. */
export const noSamples: Samples = { at: [], oldestAge: [], targets: new Map() };

/**
 * `samples` with one more point, taken from `overview` at its `now`; points older than
 * `windowMs` before it are dropped; an overview not newer than the last sample adds nothing.
 * A target missing from the overview has nothing waiting, so it samples as 0; a target seen
 * for the first time reads 0 before it appeared, and one that read 0 in every kept sample is
 * dropped.
 *
 * @example
 * ```ts
 * let samples = addSample(noSamples, overview);
 * samples = addSample(samples, nextOverview);
 * samples.at.length; // 2
 * ```
 */
export function addSample(
  samples: Samples,
  overview: Overview,
  windowMs = sampleWindowMs,
): Samples {
  const at = Date.parse(overview.now);
  // uPlot needs ascending times: an answer older than the newest sample (crossed polls) is skipped.
  if (samples.at.length > 0 && at <= samples.at[samples.at.length - 1]!) return samples;
  const first = samples.at.findIndex((t) => t >= at - windowMs);
  const from = first === -1 ? samples.at.length : first;
  const kept = samples.at.length - from;
  const next = (values: number[] | undefined, value: number) =>
    values ? [...values.slice(from), value] : [...new Array<number>(kept).fill(0), value];
  const current = new Map(overview.targets.map((t) => [`${t.source}\0${t.target}`, t]));
  const targets = new Map<string, TargetSamples>();
  for (const key of new Set([...samples.targets.keys(), ...current.keys()])) {
    const old = samples.targets.get(key);
    const now = current.get(key);
    const failing = next(old?.failing, now?.failing ?? 0);
    const dead = next(old?.dead, now?.dead ?? 0);
    // A target that waited on nothing in the whole window leaves the charts.
    if (!now && failing.every((n) => n === 0) && dead.every((n) => n === 0)) continue;
    const label = old?.label ?? `${now!.source} → ${now!.target}`;
    targets.set(key, { label, failing, dead });
  }
  return {
    at: next(samples.at, at),
    oldestAge: next(samples.oldestAge, overview.oldestUnprocessedAgeSeconds),
    targets,
  };
}

/**
 * The rolling samples of the overviews this component has seen, one point per new overview.
 *
 * @example
 * ```tsx
 * const samples = useSamples(data); // data: the polled Overview, or null while loading
 * <TimeChart id="chart-oldest-age" title="Oldest unprocessed" minutes={samples.at}
 *   lines={[{ label: "age", values: samples.oldestAge, color: "#7c3aed" }]} />
 * ```
 */
export function useSamples(overview: Overview | null): Samples {
  const state = useRef<{ last: Overview | null; samples: Samples }>({
    last: null,
    samples: noSamples,
  });
  if (overview && overview !== state.current.last) {
    state.current = { last: overview, samples: addSample(state.current.samples, overview) };
  }
  return state.current.samples;
}
