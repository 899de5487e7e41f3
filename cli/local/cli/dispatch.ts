/**
 * Which function runs each command of the bin: `start`, `send`, `outage-drill`, `keys`, `ops`, or the usage.
 * Returns the command's exit code (2 for an unknown command).
 */
export const BIN_NAME = 'whatsapp-webhook-dedup';

type Command = (args: readonly string[]) => Promise<number>;

const COMMANDS: Readonly<Record<string, { readonly summary: string; readonly run: Command }>> = {
  start: {
    summary: 'the local stack over your subscribers (--subscribers PATH, default bin/subscribers.ts)',
    run: async (args) =>
      (await import('./start-command.ts')).runStart(args, {
        commandName: `${BIN_NAME} start`,
        sendCommand: `npx ${BIN_NAME} send BODY.json`,
      }),
  },
  send: {
    summary: 'sign a webhook body file and POST it (FILE [--url URL] [--secret S])',
    run: async (args) => (await import('./send-command.ts')).runSend(args, process.env, `${BIN_NAME} send`),
  },
  'outage-drill': {
    summary: 'drive the local stack through an outage as Meta would (--help for the options)',
    run: async (args) =>
      (await import('../../outage-drill/outage-drill.ts')).runOutageDrill(args, `${BIN_NAME} outage-drill`),
  },
  keys: {
    summary: 'print the event keys of a webhook body file (FILE)',
    run: async (args) => (await import('../../keys/keys.ts')).runKeysCli(args, process, `${BIN_NAME} keys`),
  },
  ops: {
    summary: 'operator tools for the local or a deployed stack (--help for the commands)',
    run: async (args) => {
      const { resolveTarget, runOps } = await import('../../ops/run-ops.ts');
      return runOps(args, process, { resolveTarget, program: `${BIN_NAME} ops` });
    },
  },
};

export const BIN_USAGE = [
  `usage: ${BIN_NAME} COMMAND [options]`,
  ...Object.entries(COMMANDS).map(([name, { summary }]) => `  ${name.padEnd(12)} ${summary}`),
].join('\n');

export async function dispatchCommand(
  argv: readonly string[],
  stderr: { write(text: string): unknown } = process.stderr,
): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    stderr.write(`${BIN_USAGE}\n`);
    return name === undefined ? 2 : 0;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (command === undefined) {
    stderr.write(`${BIN_NAME}: unknown command ${name}\n${BIN_USAGE}\n`);
    return 2;
  }
  return command.run(args);
}
