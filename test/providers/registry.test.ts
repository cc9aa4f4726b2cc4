import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/config/resolve.ts";
import { sourceSchema } from "../../src/config/schema.ts";
import * as root from "../../src/index.ts";
import { providerDefinitions, providerFor, providerNames } from "../../src/providers/all.ts";
import { providerDefinition } from "../../src/providers/definition.ts";
import { presetNames } from "../../src/providers/presets.ts";
import * as registry from "../../src/providers/registry.ts";
import { providerSamples, sampleSourceConfig } from "../../src/testing/samples/index.ts";

// The provider registry (src/providers/registry.ts) is the one list of providers: a provider
// file whose definition is not listed there, or a registered provider without its docs section
// and catalogue row, fails here.

const folder = fileURLToPath(new URL("../../src/providers/", import.meta.url));
const docs = readFileSync(
  fileURLToPath(new URL("../../docs/providers.md", import.meta.url)),
  "utf8",
);

/** GitHub's heading anchor: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
const anchors = new Set(
  [...docs.matchAll(/^## (.+)$/gm)].map(([, h = ""]) => `#${slug(h.trim())}`),
);

const isHelper = (value: unknown): value is { [providerDefinition]: { name: string } } =>
  typeof value === "function" && providerDefinition in value;

describe("provider registry", () => {
  it("lists every provider file's definition, and every preset", async () => {
    const registered = new Set(providerDefinitions);
    // Provider files, and preset files (one each in presets/, listed in presets/index.ts).
    const files = [
      ...readdirSync(folder),
      ...readdirSync(`${folder}presets`).map((f) => `presets/${f}`),
    ].filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"));
    const defined: string[] = [];
    for (const file of files) {
      const module = (await import(`${folder}${file}`)) as Record<string, unknown>;
      for (const value of Object.values(module)) {
        if (!isHelper(value)) continue;
        defined.push(value[providerDefinition].name);
        expect(
          registered.has(value[providerDefinition] as never),
          `${file} is not in registry.ts`,
        ).toBe(true);
      }
    }
    expect(new Set(defined)).toEqual(new Set(providerNames));
    for (const name of presetNames) expect(providerFor(name)?.name).toBe(name);
  });

  it("names each provider once, 45 in all, and the config schema accepts exactly those", () => {
    expect(providerNames).toHaveLength(45);
    expect(new Set(providerNames).size).toBe(45);
    expect(Object.keys(registry)).toHaveLength(45);
    expect(sourceSchema.options).toHaveLength(45);
    expect(sourceSchema.safeParse({ provider: "nope", secrets: ["s"] }).success).toBe(false);
  });

  it.each(providerDefinitions)(
    "$name: a docs section and a catalogue row that points to it",
    (p) => {
      expect(anchors.has(p.docs), `docs/providers.md has no section ${p.docs}`).toBe(true);
      const row = docs.split("\n").find((line) => new RegExp(`^\\| \`${p.name}\` +\\|`).test(line));
      expect(row, `no catalogue row for ${p.name}`).toBeDefined();
      expect(row).toContain(`](${p.docs})`);
    },
  );

  it("exports every source helper from hookinbox, and each one sets its provider", () => {
    for (const [name, helper] of Object.entries(registry)) {
      expect((root as Record<string, unknown>)[name], `hookinbox exports ${name}`).toBe(helper);
      const definition = helper[providerDefinition];
      const options = { secrets: ["s"] } as never;
      expect((helper as (o: never) => unknown)(options)).toEqual({
        provider: definition.name,
        secrets: ["s"],
      });
    }
  });

  it.each(providerDefinitions)("$name: a source of it gets its scheme, with its identity", (p) => {
    const sample = providerSamples.get(p.name);
    if (!sample) throw new Error(`no sample for ${p.name}`);
    const source = resolveConfig(
      {
        sources: {
          probe: sampleSourceConfig(
            sample,
            sample.exampleSecret,
            "https://hooks.example.com/webhooks/probe",
          ),
        },
      },
      {},
    ).sources.get("probe");
    expect(source?.scheme.provider).toBe(p.name);
    if (p.identity !== undefined) expect(source?.scheme.identity).toBe(p.identity);
  });
});
