import { describe } from "vitest";
import { busCrashScenario } from "./bus-crash.ts";
import { redisHarness } from "./bus-env.ts";

describe("redis destination under a broker restart and a SIGKILL", () =>
  busCrashScenario("redis", redisHarness));
