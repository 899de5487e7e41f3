/**
 * The official DynamoDB Local, for the tests, `npm start` and the benchmarks.
 *
 * Its jar ships inside the npm package `amplify-dynamodb-simulator` (2.9.30 carries DynamoDB Local 1.25.1 under
 * `package/emulator/`). Taking that package as a devDependency would pull about 350 MB of transitive
 * dependencies for one folder, so on first use we fetch its one tarball (~56 MB) with the ordinary npm client,
 * check it against the registry's sha512 integrity pinned below, and extract only the emulator into the
 * git-ignored `.cache/dynamodb-local/<version>/`. See docs/claim-store.md.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import getPort from 'get-port';
import { packageRoot } from '../package-root.ts';
import { killOnExit } from './child-process-reaper.ts';

const execFileAsync = promisify(execFile);

export const DYNAMODB_LOCAL_VERSION = '1.25.1';
export const DYNAMODB_LOCAL_PACKAGE = 'amplify-dynamodb-simulator@2.9.30';
/** The registry's `dist.integrity` of that tarball; a different tarball is refused. */
export const DYNAMODB_LOCAL_PACKAGE_INTEGRITY =
  'sha512-xTeeRLvzEfqyd5lh3bH4c0kHvSHHmmhD5ZDsHFKAQ5g2Zl6JqlFdutaQhCLHzxEp6Ry1o7TB6niIoXuQAnSewQ==';
export const DEFAULT_DYNAMODB_LOCAL_DIRECTORY = join(
  packageRoot(),
  '.cache',
  'dynamodb-local',
  DYNAMODB_LOCAL_VERSION,
);
const JAR = 'DynamoDBLocal.jar';
const NATIVE_LIBRARIES = 'DynamoDBLocal_lib';
const JAVA_INSTALL_HINT = 'apt-get install -y default-jre-headless';

export class DynamoDbLocalError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DynamoDbLocalError';
  }
}

export class JavaNotFoundError extends DynamoDbLocalError {
  constructor(command = 'java') {
    super(
      `DynamoDB Local needs Java, but \`${command}\` was not found: install a JRE (${JAVA_INSTALL_HINT}).`,
    );
    this.name = 'JavaNotFoundError';
  }
}

export class IntegrityMismatchError extends DynamoDbLocalError {
  constructor(actual: string) {
    super(
      `${DYNAMODB_LOCAL_PACKAGE} does not match its pinned integrity (expected ${DYNAMODB_LOCAL_PACKAGE_INTEGRITY}, got ${actual}); nothing was extracted.`,
    );
    this.name = 'IntegrityMismatchError';
  }
}

class PortInUseError extends DynamoDbLocalError {
  constructor(port: number) {
    super(`Port ${port} is already in use.`);
    this.name = 'PortInUseError';
  }
}

export interface DynamoDbLocalInstallation {
  readonly directory: string;
  readonly jarPath: string;
  readonly libraryPath: string;
}

export interface DynamoDbLocal {
  /** `http://127.0.0.1:<port>`; any region and credentials work (`-sharedDb`). */
  readonly endpoint: string;
  readonly port: number;
  /** Stops the JVM (SIGTERM, then SIGKILL after 5 s). Safe to call twice. */
  stop(): Promise<void>;
}

export interface StartDynamoDbLocalOptions {
  /** A fixed port; by default a free one is picked (and re-picked if another process takes it first). */
  readonly port?: number;
  /** Where the emulator is (or is to be) extracted. @default `.cache/dynamodb-local/1.25.1/` in the repository */
  readonly directory?: string;
  /** @default 60 000 */
  readonly startupTimeoutMs?: number;
  /** The Java launcher. @default `java` on PATH */
  readonly javaCommand?: string;
}

const installations = new Map<string, Promise<DynamoDbLocalInstallation>>();

/**
 * Makes sure DynamoDB Local is extracted (fetching and verifying it on first use) and returns its paths.
 * Safe to run concurrently, within one process and across processes: the emulator is extracted into a private
 * temporary folder and renamed into place in one step, so the folder either is complete or does not exist.
 */
export function ensureDynamoDbLocal(
  options: { directory?: string } = {},
): Promise<DynamoDbLocalInstallation> {
  const directory = options.directory ?? DEFAULT_DYNAMODB_LOCAL_DIRECTORY;
  let installation = installations.get(directory);
  if (installation === undefined) {
    installation = install(directory);
    installations.set(directory, installation);
    installation.catch(() => installations.delete(directory));
  }
  return installation;
}

async function install(directory: string): Promise<DynamoDbLocalInstallation> {
  const paths = installationPaths(directory);
  if (existsSync(paths.jarPath)) return paths;
  const parent = dirname(directory);
  await mkdir(parent, { recursive: true });
  // A sibling of the target, so the final rename stays on one filesystem and is atomic.
  const work = await mkdtemp(join(parent, '.incoming-'));
  try {
    const tarball = await fetchTarball(work);
    await verifyIntegrity(tarball);
    const staging = join(work, 'emulator');
    await mkdir(staging);
    await run('tar', ['-xzf', tarball, '-C', staging, '--strip-components=2', 'package/emulator']);
    if (!existsSync(join(staging, JAR))) {
      throw new DynamoDbLocalError(`${DYNAMODB_LOCAL_PACKAGE} has no emulator/${JAR}.`);
    }
    try {
      await rename(staging, directory);
    } catch (error) {
      // Another process finished first: its copy is as good as ours.
      if (!existsSync(paths.jarPath)) throw error;
    }
    return paths;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

function installationPaths(directory: string): DynamoDbLocalInstallation {
  return { directory, jarPath: join(directory, JAR), libraryPath: join(directory, NATIVE_LIBRARIES) };
}

async function fetchTarball(destination: string): Promise<string> {
  const { stdout } = await run(
    'npm',
    ['pack', DYNAMODB_LOCAL_PACKAGE, '--pack-destination', destination, '--json', '--silent'],
    destination,
  );
  const packed = JSON.parse(stdout) as Array<{ filename?: string }>;
  const filename = packed[0]?.filename;
  if (filename === undefined)
    throw new DynamoDbLocalError(`npm pack ${DYNAMODB_LOCAL_PACKAGE} named no file.`);
  return join(destination, filename);
}

async function verifyIntegrity(file: string): Promise<void> {
  const hash = createHash('sha512');
  await pipeline(createReadStream(file), hash);
  const actual = `sha512-${hash.digest('base64')}`;
  if (actual !== DYNAMODB_LOCAL_PACKAGE_INTEGRITY) throw new IntegrityMismatchError(actual);
}

async function run(command: string, args: string[], cwd?: string): Promise<{ stdout: string }> {
  try {
    return await execFileAsync(command, args, { cwd, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    if (isMissingCommand(error)) {
      throw new DynamoDbLocalError(`Installing DynamoDB Local needs \`${command}\` on PATH.`, {
        cause: error,
      });
    }
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new DynamoDbLocalError(
      `\`${command} ${args[0]}\` failed${stderr ? `: ${lastLines(stderr)}` : ''}`,
      {
        cause: error,
      },
    );
  }
}

/** Throws {@link JavaNotFoundError} when no `java` can be run. */
export async function assertJavaAvailable(javaCommand = 'java'): Promise<void> {
  try {
    await execFileAsync(javaCommand, ['-version']);
  } catch (error) {
    if (isMissingCommand(error)) throw new JavaNotFoundError(javaCommand);
    throw error;
  }
}

/** Starts DynamoDB Local in memory with a shared database and resolves once it answers HTTP requests. */
export async function startDynamoDbLocal(options: StartDynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const installation = await ensureDynamoDbLocal(
    options.directory === undefined ? {} : { directory: options.directory },
  );
  const javaCommand = options.javaCommand ?? 'java';
  await assertJavaAvailable(javaCommand);
  const timeoutMs = options.startupTimeoutMs ?? 60_000;
  const maxAttempts = options.port === undefined ? 5 : 1;
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await getPort());
    try {
      return await launch(installation, javaCommand, port, timeoutMs);
    } catch (error) {
      if (!(error instanceof PortInUseError) || attempt >= maxAttempts) throw error;
    }
  }
}

async function launch(
  installation: DynamoDbLocalInstallation,
  javaCommand: string,
  port: number,
  timeoutMs: number,
): Promise<DynamoDbLocal> {
  const child = spawn(
    javaCommand,
    [
      `-Djava.library.path=${installation.libraryPath}`,
      '-jar',
      installation.jarPath,
      '-inMemory',
      '-sharedDb',
      '-disableTelemetry',
      '-port',
      String(port),
    ],
    { cwd: installation.directory, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const unregister = killOnExit(child);
  const output = collectOutput(child);
  // The emulator lives only as long as this process, never the other way round: a script that forgets
  // stop() still ends, and the exit hook then kills the JVM.
  child.unref();
  for (const stream of [child.stdout, child.stderr]) (stream as { unref?: () => void } | null)?.unref?.();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitUntilAnswering(endpoint, child, output, port, timeoutMs, javaCommand);
  } catch (error) {
    // A child that never spawned (no pid) emits no 'exit' to wait for.
    if (child.pid !== undefined) {
      child.kill('SIGKILL');
      await exited;
    }
    unregister();
    throw error;
  }
  let stopping: Promise<void> | undefined;
  return {
    endpoint,
    port,
    stop: () => {
      stopping ??= stopChild(child, exited).finally(unregister);
      return stopping;
    },
  };
}

async function waitUntilAnswering(
  endpoint: string,
  child: ChildProcess,
  output: () => string,
  port: number,
  timeoutMs: number,
  javaCommand: string,
): Promise<void> {
  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
  });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (spawnError !== undefined) {
      throw isMissingCommand(spawnError)
        ? new JavaNotFoundError(javaCommand)
        : new DynamoDbLocalError(`DynamoDB Local could not start: ${spawnError.message}`);
    }
    if (child.exitCode !== null || child.signalCode !== null) {
      const log = output();
      if (/BindException|Address already in use/i.test(log)) throw new PortInUseError(port);
      throw new DynamoDbLocalError(
        `DynamoDB Local exited (${child.exitCode ?? child.signalCode}) before answering: ${lastLines(log)}`,
      );
    }
    if (await answers(endpoint)) return;
    if (Date.now() > deadline) {
      throw new DynamoDbLocalError(`DynamoDB Local did not answer on ${endpoint} within ${timeoutMs} ms.`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Any HTTP answer (DynamoDB Local rejects an unsigned GET with 400) means the server is listening. */
async function answers(endpoint: string): Promise<boolean> {
  try {
    const response = await fetch(endpoint, { signal: AbortSignal.timeout(1000) });
    await response.arrayBuffer();
    return true;
  } catch {
    return false;
  }
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(killer);
}

/** Keeps the last lines of the JVM's output for error messages (and keeps its pipes drained). */
function collectOutput(child: ChildProcess): () => string {
  let tail = '';
  const append = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  return () => tail;
}

function lastLines(text: string, count = 5): string {
  return text.trim().split('\n').slice(-count).join(' | ');
}

function isMissingCommand(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ENOENT';
}
