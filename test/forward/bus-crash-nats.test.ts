import { describe } from "vitest";
import { busCrashScenario } from "./bus-crash.ts";
import { natsHarness } from "./bus-env.ts";

describe("nats destination under a broker restart and a SIGKILL", () =>
  busCrashScenario("nats", natsHarness));
