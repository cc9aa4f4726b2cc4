import { z } from "zod";
import { hookinboxError } from "../errors.ts";
import type { TargetPreview } from "../forward/transform-preview.ts";
import { text } from "./fields.ts";
import { defineOperation } from "./operation.ts";

/**
 * What each destination would be sent for a stored event now, through the current route and
 * destination transforms: the headers and body, "filtered", or the transform's error. Nothing is
 * sent, signed or stored. With `target`, that destination only (HOOKINBOX_DESTINATION_NOT_FOUND
 * when it is not one); without, every destination the event was delivered to, else those it
 * routes to now.
 *
 * @example
 * ```ts
 * const { previews } = await previewTransforms.run(ctx, { id: "evt_01J…", target: "billing" });
 * ```
 */
export const previewTransforms = defineOperation({
  name: "events.preview",
  summary: "what each destination would be sent for an event, after transforms (nothing is sent)",
  readOnly: true,
  input: z.strictObject({
    id: text("event id"),
    target: text("destination name").optional(),
  }),
  run: async (ctx, { id, target }): Promise<{ eventId: string; previews: TargetPreview[] }> => {
    const preview = ctx.previewTarget;
    if (!preview)
      throw hookinboxError("HOOKINBOX_USAGE", "a preview needs the config's destinations");
    const event = await ctx.store.getEvent(id);
    if (!event) throw hookinboxError("HOOKINBOX_EVENT_NOT_FOUND", id);
    const configured = new Set(ctx.destinations.map((d) => d.name));
    if (target !== undefined && !configured.has(target))
      throw hookinboxError(
        "HOOKINBOX_DESTINATION_NOT_FOUND",
        `${target} (transforms apply to destinations: ${[...configured].join(", ") || "none"})`,
      );
    const delivered = [...new Set(event.deliveries.map((d) => d.target))];
    const routed = ctx.routing?.route(event.source, event.type, event.body) ?? [];
    const fromEvent = delivered.length > 0 ? delivered : routed;
    const targets = target !== undefined ? [target] : fromEvent.filter((t) => configured.has(t));
    const subject = {
      eventId: event.id,
      source: event.source,
      type: event.type,
      body: event.body,
      headers: event.headers,
    };
    const previews: TargetPreview[] = [];
    for (const name of targets) {
      const one = await preview(name, subject);
      if (one) previews.push(one);
    }
    return { eventId: event.id, previews };
  },
});
