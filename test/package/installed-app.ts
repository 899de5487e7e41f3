/**
 * The installed path (docs/decisions.md, "The installed path is its own CI step"), one step per function: pack
 * this package as `npm publish` would, make a CDK app outside the repository that installs the tarball and its
 * peers at this repository's locked versions, write the README's files into it, and run its own tools there (tsc,
 * cdk). Nothing here reaches into the repository from the app: what the tarball lacks, the app lacks.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import getPort from 'get-port';
import { killOnExit } from '../../cli/local/emulators/child-process-reaper.ts';

const execFileAsync = promisify(execFile);

export const REPOSITORY_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * What the app installs beside the tarball: the peers (aws-cdk-lib, constructs, esbuild), the CDK CLI, the
 * TypeScript toolchain the README's app runs on, and cdk-nag, which the README's stack registers.
 */
export const APP_PACKAGES = [
  'aws-cdk-lib',
  'constructs',
  'esbuild',
  'aws-cdk',
  'typescript',
  'tsx',
  '@types/node',
  'cdk-nag',
] as const;

export interface CommandResult {
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The environment of the app's commands: this process's, without what npm set for the repository's own
 * script (`npm_package_*`, `npm_config_local_prefix`, …), which would point npm back at the repository.
 */
function appEnvironment(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const kept = Object.entries(process.env).filter(
    ([name]) =>
      !/^npm_(package|lifecycle|config_local_prefix|config_prefix|command|execpath|node_execpath)/i.test(
        name,
      ) && name !== 'INIT_CWD',
  );
  return { ...Object.fromEntries(kept), ...extra };
}

export async function run(
  command: string,
  args: readonly string[],
  options: { readonly cwd: string; readonly env?: NodeJS.ProcessEnv; readonly timeoutMs?: number },
): Promise<CommandResult> {
  try {
    const { stdout, stderr } = await execFileAsync(command, [...args], {
      cwd: options.cwd,
      env: appEnvironment(options.env),
      timeout: options.timeoutMs ?? 300_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { stdout, stderr };
  } catch (error) {
    const failed = error as Error & { stdout?: string; stderr?: string };
    throw new Error(
      `${command} ${args.join(' ')} failed in ${options.cwd}: ${failed.message}\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}`,
    );
  }
}

export interface PackedPackage {
  readonly tarball: string;
  /** The tarball's bytes (gzip), as `npm pack --json` reports `size`. */
  readonly bytes: number;
  readonly unpackedBytes: number;
  readonly files: readonly string[];
}

/** The two published packages: the construct at the repository's root, the operator CLI in cli/. */
export const CONSTRUCT_DIRECTORY = REPOSITORY_ROOT;
export const CLI_DIRECTORY = join(REPOSITORY_ROOT, 'cli');

/**
 * Builds dist/ (`npm run build`, what `prepack` runs) and packs the package of `directory` into `destination`.
 * The CLI's build reads the construct's declarations, so the construct is built first. Scripts are run apart,
 * since their output would precede `npm pack --json`'s on stdout.
 */
export async function packPackage(
  destination: string,
  directory = CONSTRUCT_DIRECTORY,
): Promise<PackedPackage> {
  await run('npm', ['run', '--silent', 'build'], { cwd: CONSTRUCT_DIRECTORY });
  if (directory !== CONSTRUCT_DIRECTORY) await run('npm', ['run', '--silent', 'build'], { cwd: directory });
  const { stdout } = await run(
    'npm',
    ['pack', '--json', '--ignore-scripts', '--pack-destination', destination],
    { cwd: directory },
  );
  const [packed] = JSON.parse(stdout) as Array<{
    filename: string;
    size: number;
    unpackedSize: number;
    files: Array<{ path: string }>;
  }>;
  if (packed === undefined) throw new Error('npm pack reported no package');
  return {
    tarball: join(destination, packed.filename),
    bytes: packed.size,
    unpackedBytes: packed.unpackedSize,
    files: packed.files.map((file) => file.path),
  };
}

/** `name@version` for each package, at the version this repository's package-lock.json installs. */
export function lockedSpecifiers(names: readonly string[]): string[] {
  const lock = JSON.parse(readFileSync(join(REPOSITORY_ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string }>;
  };
  return names.map((name) => {
    const version = lock.packages[`node_modules/${name}`]?.version;
    if (version === undefined) throw new Error(`package-lock.json locks no ${name}`);
    return `${name}@${version}`;
  });
}

/** Writes `files` (path in the app → content) and a minimal ESM package.json into `appDirectory`. */
export function writeApp(appDirectory: string, files: Readonly<Record<string, string>>): void {
  mkdirSync(appDirectory, { recursive: true });
  writeFileSync(
    join(appDirectory, 'package.json'),
    `${JSON.stringify({ name: 'support-webhook', version: '1.0.0', private: true, type: 'module' }, null, 2)}\n`,
  );
  for (const [path, content] of Object.entries(files)) {
    const file = join(appDirectory, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
}

/** Installs the construct's tarball and the app's packages as dependencies. */
export async function installApp(appDirectory: string, tarball: string): Promise<void> {
  await run(
    'npm',
    [
      'install',
      '--save-exact',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      tarball,
      ...lockedSpecifiers(APP_PACKAGES),
    ],
    { cwd: appDirectory, timeoutMs: 600_000 },
  );
}

export interface SynthesizedFunction {
  readonly logicalId: string;
  /** The construct path, e.g. `SupportWebhook/Webhook/SubscriberSupport/Consumer/Resource`. */
  readonly path: string;
  /** The bundled code (`index.mjs` of its asset directory). */
  readonly bundle: string;
  readonly bundleBytes: number;
}

/** Every Lambda function of a synthesized stack, with its bundle read from the cloud assembly. */
export function synthesizedFunctions(cloudAssembly: string, stackName: string): SynthesizedFunction[] {
  const template = JSON.parse(readFileSync(join(cloudAssembly, `${stackName}.template.json`), 'utf8')) as {
    Resources: Record<string, { Type: string; Metadata?: Record<string, string> }>;
  };
  return Object.entries(template.Resources)
    .filter(([, resource]) => resource.Type === 'AWS::Lambda::Function')
    .map(([logicalId, resource]) => {
      const assetPath = resource.Metadata?.['aws:asset:path'];
      if (assetPath === undefined) throw new Error(`${logicalId} has no asset`);
      const [entry] = readdirSync(join(cloudAssembly, assetPath)).filter((name) =>
        /^index\.m?js$/.test(name),
      );
      if (entry === undefined) throw new Error(`${logicalId}'s asset holds no index.mjs`);
      const file = join(cloudAssembly, assetPath, entry);
      return {
        logicalId,
        path: resource.Metadata?.['aws:cdk:path'] ?? logicalId,
        bundle: readFileSync(file, 'utf8'),
        bundleBytes: statSync(file).size,
      };
    });
}

/** The findings of cdk's policy-validation report (cdk-nag's, once registered), errors and warnings. */
export function validationViolations(cloudAssembly: string): Array<{ ruleName: string; severity: string }> {
  const report = JSON.parse(readFileSync(join(cloudAssembly, 'validation-report.json'), 'utf8')) as {
    pluginReports: Array<{ violations: Array<{ ruleName: string; severity: string }> }>;
  };
  return report.pluginReports.flatMap((plugin) => plugin.violations);
}

export interface InstalledLocalStack {
  readonly url: string;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Runs the installed package's bin as a user does (`npx whatsapp-webhook-dedup start …`: the file npm linked
 * into `node_modules/.bin`) in the app's directory, and waits until it serves `/local/info`.
 */
export async function startInstalledLocalStack(
  appDirectory: string,
  args: readonly string[],
  readyTimeoutMs = 180_000,
): Promise<InstalledLocalStack> {
  const port = await getPort();
  const child: ChildProcess = spawn(
    join(appDirectory, 'node_modules', '.bin', 'whatsapp-webhook-dedup'),
    ['start', ...args],
    { cwd: appDirectory, env: appEnvironment({ PORT: String(port) }), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const unregister = killOnExit(child);
  const lines: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => lines.push(chunk));
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stack: InstalledLocalStack = {
    url: `http://127.0.0.1:${port}`,
    output: () => lines.join(''),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      }
      unregister();
    },
  };
  const deadline = Date.now() + readyTimeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`the local stack exited (${child.exitCode}):\n${stack.output()}`);
    try {
      if ((await fetch(`${stack.url}/local/info`, { signal: AbortSignal.timeout(1_000) })).ok) return stack;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await stack.stop();
  throw new Error(`the local stack was not ready within ${readyTimeoutMs} ms:\n${stack.output()}`);
}

/** Installs the CLI's tarball as a devDependency, as the CDK CLI sits beside aws-cdk-lib. */
export async function installCli(appDirectory: string, tarball: string): Promise<void> {
  await run(
    'npm',
    ['install', '--save-dev', '--save-exact', '--prefer-offline', '--no-audit', '--no-fund', tarball],
    {
      cwd: appDirectory,
      timeoutMs: 600_000,
    },
  );
}

/** The packages installed in the app's node_modules (scoped ones as `@scope/name`). */
export function installedPackages(appDirectory: string): string[] {
  const modules = join(appDirectory, 'node_modules');
  return readdirSync(modules).flatMap((name) =>
    name.startsWith('@') ? readdirSync(join(modules, name)).map((inner) => `${name}/${inner}`) : [name],
  );
}

/**
 * The packages npm warns `EBADENGINE` about when it installs `tarball` into an empty project on Node
 * `nodeVersion`: a dry run (it resolves the whole tree, peers included, and checks every engine, but writes
 * nothing), with npm run by that Node, fetched as the `node` package from the registry.
 */
export async function engineWarnings(
  scratch: string,
  tarball: string,
  nodeVersion: string,
): Promise<string[]> {
  const project = join(scratch, `engines-${nodeVersion}-${Date.now()}`);
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, 'package.json'), '{ "name": "engine-check", "private": true }\n');
  const install = `node --version && npm install --dry-run --no-audit --no-fund --prefer-offline '${tarball}'`;
  const { stdout, stderr } = await run(
    'npx',
    ['--yes', '--package', `node@${nodeVersion}`, '--call', install],
    {
      cwd: project,
      timeoutMs: 300_000,
    },
  );
  if (!stdout.startsWith(`v${nodeVersion}`)) throw new Error(`npm ran on Node ${stdout.split('\n')[0]}`);
  return [...stderr.matchAll(/EBADENGINE\s+package: '([^']+)'/g)].map((match) => match[1] as string);
}
