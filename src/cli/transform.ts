import type { Command } from "commander";
import type { TargetPreview } from "../forward/transform-preview.ts";
import { previewTransforms } from "../operations/transform-preview.ts";
import type { CommandHost } from "./command-host.ts";

/**
 * One target's preview as text: the transforms that ran, then "filtered", the transform's error,
 * or the headers and body that would be sent.
 *
 * @example
 * ```ts
 * previewText({ target: "app", transforms: [], outcome: "filtered" }); // "target: app\n…filtered"
 * ```
 */
export function previewText(preview: TargetPreview): string {
  const lines = [
    `target: ${preview.target}`,
    `transforms: ${preview.transforms.length > 0 ? preview.transforms.join(" → ") : "none"}`,
  ];
  if (preview.outcome === "filtered") lines.push("filtered: nothing would be sent");
  else if (preview.outcome === "failed")
    lines.push(`failed: ${preview.error?.code}: ${preview.error?.message}`);
  else {
    lines.push("headers:");
    for (const [name, value] of Object.entries(preview.headers ?? {}))
      lines.push(`  ${name}: ${value}`);
    lines.push(`body (${preview.bytes} bytes, sha256 ${preview.sha256}):`);
    lines.push(preview.body ?? `(not UTF-8; base64) ${preview.base64}`);
  }
  return lines.join("\n");
}

/**
 * `hookinbox transform test <eventId> --target <name>`: prints what that destination would be sent
 * for a stored event through the current config's transforms (headers and body, or "filtered"),
 * without sending it or changing anything stored; exit 1 when a transform fails. Builds the inbox
 * from the config (the transforms are the config's code), so the sources' secrets must be set.
 *
 * @example
 * ```ts
 * registerTransform(program, host); // hookinbox transform test evt_01J… --target billing
 * ```
 */
export function registerTransform(program: Command, host: CommandHost): void {
  const transform = host.group(program, "transform", "route and destination transforms");
  host
    .leaf(transform, "test", previewTransforms.summary)
    .argument("<eventId>", "a stored event")
    .requiredOption("--target <name>", "the destination")
    .action((eventId: string, options) =>
      host.run(
        options,
        {
          operation: previewTransforms,
          access: "inbox",
          names: { id: "<eventId>", target: "--target" },
          text: ({ previews }) => previews.map(previewText).join("\n\n"),
          exitCode: ({ previews }) => (previews.some((p) => p.outcome === "failed") ? 1 : 0),
        },
        { id: eventId, target: options.target },
      ),
    );
}
