// Entry of the SQLite writer thread: registers the TypeScript loader in this thread (a worker
// does not inherit the main thread's programmatic registration), then starts the writer.
import { register } from "tsx/esm/api";

register();
await import("./writer-thread-main.ts");
