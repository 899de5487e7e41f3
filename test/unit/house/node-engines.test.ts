/**
 * Every Node version the README names installs this repository without an engine warning: the lockfile holds
 * no package that refuses one of them, and the README names exactly the lines the CLI's `engines` allows (the
 * construct's allow Node 20 too). `npm run test:package` checks the packed packages the same way with npm
 * itself, on each of those Node versions. The first block shows each check failing on made-up files.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  lowestVersionsOf,
  type PackageLock,
  packagesRefusingNode,
  readmeNodeRequirement,
} from './node-engines.ts';

const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');

describe('the engine checks, on made-up files', () => {
  it('reads the lowest version of each line of a range', () => {
    expect(lowestVersionsOf('^20.19.0 || ^22.13.0 || >=24.0.0')).toEqual(['20.19.0', '22.13.0', '24.0.0']);
    expect(lowestVersionsOf('>=22')).toEqual(['22.0.0']);
  });

  it('finds a package that refuses a version, and skips one npm would not install on this platform', () => {
    const lock: PackageLock = {
      packages: {
        '': { version: '1.0.0', engines: { node: '>=24' } },
        'node_modules/cookie': { version: '2.0.2', engines: { node: '>=22' } },
        'node_modules/fastify/node_modules/old': { version: '1.0.0', engines: { node: '^20.11 || >=22' } },
        'node_modules/binding-wasm32': { version: '1.0.0', engines: { node: '>=23' }, cpu: ['wasm32'] },
        'node_modules/not-on-linux': { version: '1.0.0', engines: { node: '>=23' }, os: ['!linux'] },
        'node_modules/linked': { link: true, engines: { node: '>=99' } },
      },
    };
    const linux = { os: 'linux', cpu: 'x64' };
    expect(packagesRefusingNode(lock, '20.19.0', linux)).toEqual(['cookie@2.0.2 (node >=22)']);
    expect(packagesRefusingNode(lock, '22.13.0', linux)).toEqual([]);
    expect(packagesRefusingNode(lock, '22.13.0', { os: 'linux', cpu: 'wasm32' })).toEqual([
      'binding-wasm32@1.0.0 (node >=23)',
    ]);
  });

  it('words the README requirement from the versions', () => {
    expect(readmeNodeRequirement(['24.0.0', '22.13.0'])).toBe('Node.js 24 (the Lambda runtime) or 22.13+');
  });
});

describe('this repository', () => {
  const cli = JSON.parse(read('cli/package.json'));
  const construct = JSON.parse(read('package.json'));
  const named = lowestVersionsOf(cli.engines.node);

  it("names in the README the Node lines the CLI's engines allow", () => {
    expect(read('README.md').replace(/\s+/g, ' ')).toContain(`Needs ${readmeNodeRequirement(named)},`);
  });

  it('lets the construct install wherever the CLI does, and on Node 20.19 as well', () => {
    const constructs = lowestVersionsOf(construct.engines.node);
    expect(constructs).toEqual(expect.arrayContaining(named));
    expect(constructs).toContain('20.19.0');
  });

  it.each(named)('holds no package in the lockfile that refuses Node %s', (version) => {
    expect(packagesRefusingNode(JSON.parse(read('package-lock.json')), version)).toEqual([]);
  });
});
