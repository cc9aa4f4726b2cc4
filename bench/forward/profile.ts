// bench:forward --profile: the gateway under `node --cpu-prof` (every thread writes its own
// .cpuprofile, the SQLite writer thread's included), its commits per event read from
// `hookinbox_store_commits_total`, and each profile's hot spots printed.
import { readdirSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { printProfileTop } from "../ingest/profile-top.ts";

/** A TCP port free now on 127.0.0.1 (for the gateway's metrics listener). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** One counter's total (summed over its labels) from a Prometheus text exposition. */
function total(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`))
      sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

/** What the gateway's metrics say now: store commits, events accepted, deliveries ended. */
export async function scrapeCounts(port: number) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return {
    commits: total(text, "hookinbox_store_commits_total"),
    accepted: total(text, "hookinbox_events_accepted_total"),
    deliveries: total(text, "hookinbox_deliveries_total"),
  };
}

/** Prints commits per event between two scrapes. */
export function printCommits(
  before: Awaited<ReturnType<typeof scrapeCounts>>,
  after: Awaited<ReturnType<typeof scrapeCounts>>,
): void {
  const commits = after.commits - before.commits;
  const events = after.accepted - before.accepted;
  const ended = after.deliveries - before.deliveries;
  console.log(
    `  profile: ${commits} commits for ${events} events accepted and ${ended} deliveries ended: ${(commits / Math.max(events, 1)).toFixed(3)} commits per event`,
  );
}

/** Prints the hot spots of every .cpuprofile the gateway wrote into `dir` (one per thread). */
export function printProfiles(dir: string): void {
  const files = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"));
  for (const file of files) {
    console.log(`\n=== ${join(dir, file)}`);
    printProfileTop(join(dir, file), 20);
  }
}
