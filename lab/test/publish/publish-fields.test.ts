/**
 * The publish gate (lab/publish/publish-fields.ts): `npm publish` of either package stops while the manifest
 * lacks its repository, homepage or bugs address (the public address is filled in when it is known).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { missingPublishFields } from '../../publish/publish-fields.ts';

const execFileAsync = promisify(execFile);
const root = new URL('../../../', import.meta.url);
const manifest = (path: string) => JSON.parse(readFileSync(new URL(path, root), 'utf8'));

const complete = {
  repository: { type: 'git', url: 'git+https://example.org/team/whatsapp-webhook-dedup.git' },
  homepage: 'https://example.org/team/whatsapp-webhook-dedup#readme',
  bugs: { url: 'https://example.org/team/whatsapp-webhook-dedup/issues' },
  license: 'MIT',
  keywords: ['whatsapp'],
};

describe('the publish gate', () => {
  it('passes a complete manifest and names each missing field', () => {
    expect(missingPublishFields(complete)).toEqual([]);
    expect(missingPublishFields({ ...complete, repository: 'git@example.org:team/x.git' })).toEqual([
      expect.stringMatching(/^repository:/),
    ]);
    expect(missingPublishFields({ license: 'MIT', keywords: [] })).toEqual([
      expect.stringMatching(/^repository:/),
      expect.stringMatching(/^homepage:/),
      expect.stringMatching(/^bugs:/),
      'keywords',
    ]);
  });

  it.each(['package.json', 'cli/package.json'])('runs before `npm publish` of %s', (path) => {
    expect(manifest(path).scripts.prepublishOnly).toMatch(/lab\/publish\/publish-fields\.ts \.$/);
  });

  it.each(['.', 'cli'])(
    'stops `npm publish` of %s exactly while its manifest lacks a field',
    async (directory) => {
      const missing = missingPublishFields(manifest(`${directory}/package.json`));
      const run = execFileAsync('npx', ['tsx', 'lab/publish/publish-fields.ts', directory], { cwd: root });
      if (missing.length === 0) {
        await expect(run).resolves.toBeDefined();
      } else {
        const { stderr } = (await run.catch((error: { stderr: string }) => error)) as { stderr: string };
        expect(stderr).toContain('is not ready to publish');
        for (const field of missing) expect(stderr).toContain(field);
      }
    },
  );
});
