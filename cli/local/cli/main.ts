#!/usr/bin/env node
/**
 * `whatsapp-webhook-dedup COMMAND …`, the package's bin (docs/local.md, "Running the local stack for your own
 * app"): one entry for the local stack and the tools, each command the same function its `npm run` script
 * calls in this repository. Commands are imported on demand, so `send` never loads the stack or the SDK.
 */
import '../../tools/silence-sdk-node-version-warning.ts';
import { dispatchCommand } from './dispatch.ts';

process.exit(await dispatchCommand(process.argv.slice(2)));
