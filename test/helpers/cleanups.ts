// What a test leaves to close (inboxes, receivers, stores), run after each test by the setup file
// test/cleanup-setup.ts. A helper module's own top-level `afterEach` would run only for the first
// test file that imports it in a worker once test files share their workers' modules
// (`isolate: false`); a setup file runs for every test file.

const cleanups: Array<() => Promise<void>> = [];

/**
 * Runs `cleanup` after the current test (last registered, first run).
 *
 * @example
 * ```ts
 * const r = await startReceiver();
 * onCleanup(() => r.close());
 * ```
 */
export function onCleanup(cleanup: () => Promise<void>): void {
  cleanups.push(cleanup);
}

/**
 * Runs and forgets every cleanup registered so far, newest first.
 *
 * @example
 * ```ts
 * afterEach(runCleanups);
 * ```
 */
export async function runCleanups(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}
