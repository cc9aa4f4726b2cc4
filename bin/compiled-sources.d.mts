/** The compiled module's file URL for a source of this checkout while the build is fresh, else null. */
export function compiledUrl(source: string): string | null;
/** Compiles src/ and test/ into a new build for child processes; returns how many modules. */
export function compileSources(): Promise<number>;
