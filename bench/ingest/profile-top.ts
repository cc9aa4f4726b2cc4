// Summarises a V8 .cpuprofile (node --cpu-prof): self time by function and by origin.
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * Prints the `limit` functions with the most self time, then self time grouped by origin, as
 * shares of the busy (non-idle) time. Native calls (better-sqlite3's statements, fsync inside
 * COMMIT) count as self time of the JS function that made them.
 */
export function printProfileTop(file: string, limit: number): void {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const byFunction = new Map<string, number>();
  const byOrigin = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === "(idle)") {
      idle += us;
      continue;
    }
    const where = shorten(url);
    // Files run through tsx report line 1 for everything: show a line only when it means one.
    const line = lineNumber > 0 ? `:${lineNumber + 1}` : "";
    const name = `${functionName || "(anonymous)"}${where ? `  ${where}${line}` : ""}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    byOrigin.set(origin(url, functionName), (byOrigin.get(origin(url, functionName)) ?? 0) + us);
    total += us;
  }
  const print = (title: string, map: Map<string, number>, n: number) => {
    const busy = `${(total / 1e6).toFixed(1)} s busy of ${((total + idle) / 1e6).toFixed(1)} s`;
    console.log(`\n${title} (share of ${busy} sampled)`);
    for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, n)) {
      console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}`);
    }
  };
  print("self time by function", byFunction, limit);
  print("self time by origin", byOrigin, 15);
}

function shorten(url: string): string {
  return url
    .replace(/^file:\/\/.*?\/node_modules\//, "")
    .replace(/^file:\/\/.*?\/(src|bin)\//, "$1/");
}

/** "(idle)", "(garbage collector)", "node:<module>", an npm package, or hookinbox's src/. */
function origin(url: string, functionName: string): string {
  if (!url) return functionName.startsWith("(") ? functionName : "(native)";
  if (url.startsWith("node:")) return url.replace(/^node:(internal\/)?([^/]+).*$/, "node:$2");
  const pkg = /\/node_modules\/((@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg) return pkg;
  return /\/src\//.test(url) ? `hookinbox ${shorten(url)}` : url;
}
