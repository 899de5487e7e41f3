/**
 * The browser tests need no system Chromium: the one inside the pinned @sparticuz/chromium unpacks into
 * `.cache/chromium/<version>/` and runs here with its own libraries, whatever the machine has installed.
 */
import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import packageJson from '../../../package.json' with { type: 'json' };
import { ensurePackagedChromium } from '../../../test/support/headless-chromium.ts';

const execFileAsync = promisify(execFile);
const pinned = packageJson.devDependencies['@sparticuz/chromium'];

describe('packaged Chromium', () => {
  it('unpacks once per version and runs with its own libraries', async () => {
    const installation = await ensurePackagedChromium();
    expect(installation.source).toBe(`@sparticuz/chromium@${pinned}`);
    expect(installation.executablePath).toMatch(new RegExp(`/\\.cache/chromium/${pinned}/chromium$`));
    const unpackedAt = statSync(installation.executablePath).ctimeMs;

    const env = { ...process.env, LD_LIBRARY_PATH: installation.libraryPath.join(':') };
    const { stdout: version } = await execFileAsync(installation.executablePath, ['--version'], { env });
    expect(version).toMatch(new RegExp(`^Chromium ${pinned.split('.')[0]}\\.`));
    // The dynamic loader lists what it would load, without running the program.
    const { stdout: loaded } = await execFileAsync(installation.executablePath, [], {
      env: { ...env, LD_TRACE_LOADED_OBJECTS: '1' },
    });
    const nss = loaded.split('\n').find((line) => line.includes('libnss3.so'));
    expect(nss).toContain(`=> ${installation.libraryPath[0]}/libnss3.so`);

    expect(await ensurePackagedChromium()).toEqual(installation);
    expect(statSync(installation.executablePath).ctimeMs).toBe(unpackedAt);
  });
});
