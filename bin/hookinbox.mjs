#!/usr/bin/env node
// The `hookinbox` command. It runs the TypeScript sources through tsx's loader, so a checkout
// works right after `npm ci` with no build step, and `hookinbox.config.ts` files load as-is.
import { register as registerCjs } from "tsx/cjs/api";
import { register } from "tsx/esm/api";

// Both loaders: a config file outside an ESM package (no "type": "module") loads as CommonJS.
register();
registerCjs();
const { main } = await import("../src/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
