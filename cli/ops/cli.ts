/**
 * npm run ops -- [--local URL | --stack NAME] [--subscriber NAME] [--json] COMMAND …
 *
 * The operator's tools for the local stack and a deployed stack (docs/operations.md): inspect and forget
 * claims, pause and resume a consumer, read and redrive a DLQ, read and requeue quarantined bodies.
 */
import '../tools/silence-sdk-node-version-warning.ts';
import { runOps } from './run-ops.ts';

process.exitCode = await runOps(process.argv.slice(2), process);
