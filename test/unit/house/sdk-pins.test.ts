/**
 * The AWS SDK pins (sdk-pins.ts): exact, one copy of each SDK package, and none that needs a newer Node than
 * `engines` promises. The first block shows each check failing on a made-up manifest or lockfile.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const PROJECT_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

import {
  duplicatedSdkPackages,
  lowestNodeMajor,
  sdkPackagesBeyondNode,
  unpinnedSdkDependencies,
} from './sdk-pins.ts';

const readJson = (file: string) => JSON.parse(readFileSync(join(PROJECT_ROOT, file), 'utf8'));

describe('the SDK pin checks, on made-up files', () => {
  it('finds a caret or a tilde on an @aws-sdk package, and nothing else', () => {
    expect(
      unpinnedSdkDependencies({
        dependencies: { '@aws-sdk/client-sqs': '^3.1175.0', 'lossless-json': '^4.3.3' },
        devDependencies: { '@aws-sdk/client-s3': '~3.1175.0', '@aws-sdk/lib-dynamodb': '3.1169.0' },
      }),
    ).toEqual(['@aws-sdk/client-sqs@^3.1175.0', '@aws-sdk/client-s3@~3.1175.0']);
  });

  it('finds a second @aws-sdk/core under one client', () => {
    expect(
      duplicatedSdkPackages({
        packages: {
          'node_modules/@aws-sdk/core': { version: '3.981.2' },
          'node_modules/@aws-sdk/client-sqs': { version: '3.1175.0' },
          'node_modules/@aws-sdk/client-sqs/node_modules/@aws-sdk/core': { version: '3.990.0' },
          'node_modules/@smithy/core': { version: '3.41.1' },
        },
      }),
    ).toEqual(['@aws-sdk/core: 3.981.2, 3.990.0']);
  });

  it('reads the lowest Node major of an engines range', () => {
    expect(lowestNodeMajor('^20.19.0 || ^22.12.0 || >=24.0.0')).toBe(20);
    expect(lowestNodeMajor('>=22')).toBe(22);
    expect(() => lowestNodeMajor('node LTS')).toThrow(/not a range/);
  });

  it('finds an SDK release that needs Node 22 where engines still allows 20', () => {
    const lock = {
      packages: {
        'node_modules/@aws-sdk/core': { version: '3.999.0', engines: { node: '>=22.0.0' } },
        'node_modules/@smithy/core': { version: '3.41.1', engines: { node: '>=20.0.0' } },
        'node_modules/@aws-crypto/util': { version: '5.2.0', engines: { node: '>=18.0.0' } },
      },
    };
    expect(sdkPackagesBeyondNode(lock, 20)).toEqual(['@aws-sdk/core@3.999.0 (node >=22.0.0)']);
    expect(sdkPackagesBeyondNode(lock, 22)).toEqual([]);
  });
});

describe('package.json and package-lock.json', () => {
  const manifest = readJson('package.json');
  const lock = readJson('package-lock.json');

  it('pin every @aws-sdk package exactly', () => {
    expect(unpinnedSdkDependencies(manifest)).toEqual([]);
  });

  it('hold one version of each SDK package, shared by all the clients', () => {
    expect(duplicatedSdkPackages(lock)).toEqual([]);
  });

  it('take no SDK release that needs a newer Node than engines allows', () => {
    expect(sdkPackagesBeyondNode(lock, lowestNodeMajor(manifest.engines.node))).toEqual([]);
  });
});
