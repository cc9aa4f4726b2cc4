// Setup file of every test file (vitest.config.ts): runs the cleanups that helpers registered
// with onCleanup (test/helpers/cleanups.ts) after each test.
import { afterEach } from "vitest";
import { runCleanups } from "./helpers/cleanups.ts";

afterEach(runCleanups);
