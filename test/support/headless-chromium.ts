/**
 * Headless Chromium for the browser tests, with nothing installed through the system's package manager: the
 * system's Chromium when there is one, else the Chromium that ships inside the npm package
 * `@sparticuz/chromium` (a devDependency, pinned).
 *
 * That package unpacks its binary into `os.tmpdir()` and reuses whatever `chromium` it finds there, whichever
 * version or half-written copy that is. So it is unpacked here, once per version, into the git-ignored
 * `.cache/chromium/<version>/`: in a private folder first, renamed into place in one step, so the folder
 * either is complete or does not exist. Its Amazon Linux libraries (NSS, NSPR, expat) are unpacked too and
 * put first on the library path, so that the browser needs no more of the system than the C library.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type Browser, chromium } from 'playwright-core';

const execFileAsync = promisify(execFile);

const SYSTEM_CHROMIUM = '/usr/bin/chromium';
const PACKAGE = '@sparticuz/chromium';
const REPOSITORY_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CACHE = join(REPOSITORY_ROOT, '.cache', 'chromium');
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface ChromiumInstallation {
  /** `system` (found at /usr/bin/chromium) or `@sparticuz/chromium@<version>`. */
  readonly source: string;
  readonly executablePath: string;
  /** Folders to put first on LD_LIBRARY_PATH when launching it. */
  readonly libraryPath: readonly string[];
}

/** Launches headless Chromium (see the module's comment for which one). */
export async function launchHeadlessChromium(): Promise<Browser> {
  const installation = await findChromium();
  const libraryPath = [...installation.libraryPath, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':');
  return chromium.launch({
    executablePath: installation.executablePath,
    headless: true,
    args: ARGS,
    env: { ...process.env, ...(libraryPath ? { LD_LIBRARY_PATH: libraryPath } : {}) },
  });
}

async function findChromium(): Promise<ChromiumInstallation> {
  if (existsSync(SYSTEM_CHROMIUM)) {
    return { source: 'system', executablePath: SYSTEM_CHROMIUM, libraryPath: [] };
  }
  return ensurePackagedChromium();
}

/** Unpacks the packaged Chromium into `.cache/chromium/<version>/` unless it is there already. */
export async function ensurePackagedChromium(): Promise<ChromiumInstallation> {
  const packageRoot = packageRootOf(createRequire(import.meta.url).resolve(PACKAGE));
  const { version } = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as {
    version: string;
  };
  const directory = join(CACHE, version);
  const installation: ChromiumInstallation = {
    source: `${PACKAGE}@${version}`,
    executablePath: join(directory, 'chromium'),
    libraryPath: [join(directory, 'al2023', 'lib')],
  };
  if (existsSync(installation.executablePath)) return installation;

  await mkdir(CACHE, { recursive: true });
  // A sibling of the target, so the final rename stays on one filesystem and is atomic.
  const staging = await mkdtemp(join(CACHE, '.incoming-'));
  try {
    // The package unpacks into os.tmpdir(): a child process whose TMPDIR is the staging folder keeps it there.
    await execFileAsync(process.execPath, ['--input-type=module', '-e', UNPACK], {
      cwd: REPOSITORY_ROOT,
      env: {
        ...process.env,
        TMPDIR: staging,
        CHROMIUM_BIN: join(packageRoot, 'bin'),
        AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs20.x',
      },
    });
    if (!existsSync(join(staging, 'chromium'))) {
      throw new Error(`${installation.source} did not unpack a chromium binary into ${staging}.`);
    }
    try {
      await rename(staging, directory);
    } catch (error) {
      // Another process finished first: its copy is as good as ours.
      if (!existsSync(installation.executablePath)) throw error;
    }
    return installation;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** The folder of the package's own package.json, above its entry point (it does not export package.json). */
function packageRootOf(entry: string): string {
  for (let folder = dirname(entry); folder !== dirname(folder); folder = dirname(folder)) {
    const manifest = join(folder, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === PACKAGE) return folder;
  }
  throw new Error(`No package.json of ${PACKAGE} above ${entry}.`);
}

/**
 * Unpacks the browser, its fonts and SwiftShader, and the Amazon Linux libraries: the package unpacks those
 * libraries only where it believes it runs on Amazon Linux 2023, which the child's AWS_EXECUTION_ENV says.
 */
const UNPACK = `
import Chromium from '${PACKAGE}';
await Chromium.executablePath(process.env.CHROMIUM_BIN);
`;
