/** npm start: the local stack (docs/local.md); `runStart` says what it reads. */
import '../tools/silence-sdk-node-version-warning.ts';
import { runStart } from './cli/start-command.ts';

process.exit(await runStart(process.argv.slice(2), { commandName: 'npm start' }));
