/** npm run send -- FILE [--url URL] [--secret S]: `runSend` says what it does. */
import '../tools/silence-sdk-node-version-warning.ts';
import { runSend } from './cli/send-command.ts';

process.exit(await runSend(process.argv.slice(2)));
