// `.ci/run`'s prebuild: once the package check has packed the tarball, installs the consumer
// folder (consumer-root.ts) and builds the Next.js example (next-example.ts) into
// HOOKINBOX_CONSUMER_ROOT, at nice 19, while the shared test files run: the consumer tests then
// find both done instead of doing them after the shared files. It only saves time: the tests
// do the same steps themselves when they find them undone (a waiting test raises this process
// to its own priority), and fail with the reason when a step fails.
import { installConsumerRootIn } from "./consumer-root.ts";
import { buildNextExample } from "./next-example.ts";

// The environment vitest gives its workers, so that `next build` here makes the build the test
// would make (with NODE_ENV=test, as `next start` runs in the test).
process.env.NODE_ENV ||= "test";
process.env.TEST = "true";
process.env.VITEST = "true";
process.env.VITEST_MODE = "RUN";

const dir = process.env.HOOKINBOX_CONSUMER_ROOT;
if (!dir) throw new Error("prebuild-consumers: HOOKINBOX_CONSUMER_ROOT is not set");
const started = Date.now();
const root = installConsumerRootIn(dir);
console.log(
  `prebuild: consumer folder installed in ${Math.round((Date.now() - started) / 1000)} s`,
);
buildNextExample(root);
console.log(`prebuild: next example built at ${Math.round((Date.now() - started) / 1000)} s`);
