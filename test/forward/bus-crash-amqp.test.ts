import { describe } from "vitest";
import { busCrashScenario } from "./bus-crash.ts";
import { amqpHarness } from "./bus-env.ts";

describe("amqp destination under a broker restart and a SIGKILL", () =>
  busCrashScenario("amqp", amqpHarness));
