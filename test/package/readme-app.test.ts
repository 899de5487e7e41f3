/**
 * The README's "Use it in your own CDK app" has the shape the installed path needs: an install line, a stack
 * of at most 20 lines and a handler module, each a file the installed-path test writes verbatim. The handler
 * module imports the runtime export only, so that a user's Lambda bundle holds no aws-cdk-lib.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { README_STACK_MAX_LINES, readmeApp } from './readme-app.ts';

const { install, fromTarball, files } = readmeApp();
const manifest = (path: string) =>
  JSON.parse(readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')) as {
    name: string;
    version: string;
  };

describe('README: Use it in your own CDK app', () => {
  it('installs the package by name', () => {
    expect(install).toMatch(/^npm install whatsapp-webhook-dedup\b/m);
  });

  it('until then, packs both packages in the clone and installs the tarballs npm pack names', () => {
    expect(fromTarball).toMatch(/^npm ci && npm pack && npm pack --workspace cli\b/m);
    for (const { name, version } of [manifest('package.json'), manifest('cli/package.json')]) {
      expect(fromTarball).toMatch(new RegExp(`^npm install .*/${name}-${version}\\.tgz`, 'm'));
    }
  });

  it('shows a CDK app of at most 20 lines over the construct, then its handler module', () => {
    expect(Object.keys(files)).toEqual(['bin/app.ts', 'src/support-handlers.ts']);
    const stack = files['bin/app.ts'] as string;
    expect(stack.trimEnd().split('\n').length).toBeLessThanOrEqual(README_STACK_MAX_LINES);
    expect(stack).toContain("from 'whatsapp-webhook-dedup';");
    expect(stack).toContain("entry: 'src/support-handlers.ts'");
  });

  it('has the handler module import the runtime export alone and export its handler', () => {
    const module = files['src/support-handlers.ts'] as string;
    const imported = [...module.matchAll(/from '([^']+)'/g)].map((match) => match[1]);
    expect(imported).toEqual(['whatsapp-webhook-dedup/handlers']);
    expect(module).toMatch(/^export const webhookHandlers = defineWebhookHandlers\(/m);
    expect(module).toMatch(/^export const handler = createConsumerFromEnv\(webhookHandlers\);$/m);
  });
});
