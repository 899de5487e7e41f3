import { existsSync, readFileSync } from 'node:fs';
import { transformSync } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { resolveSubscribers, type SubscriberDefinitions } from '../../../contract/subscribers.ts';

const file = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');
const readme = file('README.md');

function section(heading: string): string {
  const start = readme.indexOf(heading);
  if (start < 0) throw new Error(`no section ${heading}`);
  const next = readme.indexOf('\n## ', start + heading.length);
  return readme.slice(start, next < 0 ? undefined : next);
}

function codeBlocks(text: string, language: string): string[] {
  return [...text.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map(
    (match) => match[1] as string,
  );
}

function codeBlockAfter(heading: string, language: string): string {
  const block = codeBlocks(section(heading), language)[0];
  if (block === undefined) throw new Error(`no ${language} block after ${heading}`);
  return block;
}

/** The text of a file's block comments without their ` * ` margins. */
function commentText(source: string): string {
  return source
    .split('\n')
    .map((line) => line.replace(/^\s*\/?\*+\/?( {1,3}|$)/, ''))
    .join('\n');
}

/** A README block declaring `subscribers`, compiled and evaluated as the CDK app would read it. */
function evaluateSubscribers(block: string): SubscriberDefinitions {
  const { code } = transformSync(block, { loader: 'ts', format: 'cjs' });
  const module = { exports: {} as { subscribers?: SubscriberDefinitions } };
  new Function('module', 'exports', code)(module, module.exports);
  if (module.exports.subscribers === undefined) throw new Error('the block exports no subscribers');
  return module.exports.subscribers;
}

/** GitHub's anchor for a heading: lowercase, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(markdown: string): Set<string> {
  return new Set([...markdown.matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1] as string)));
}

describe('README', () => {
  it('fits its journey in 1,500 words, as wc counts them, with no scoreboard', () => {
    expect(readme.split(/\s+/).filter((word) => word !== '').length).toBeLessThanOrEqual(1_500);
    expect(readme).not.toMatch(/Goals.*of \d+ met|Not met:/);
  });

  it('shows the two newcomer commands on its first screen', () => {
    const firstScreen = readme.split('\n').slice(0, 25).join('\n');
    expect(firstScreen).toContain('npm start');
    expect(firstScreen).toContain('npm test');
  });

  it('shows the handler example verbatim from the typechecked example file', () => {
    const example = file('functions/examples/crm-ticket-handlers.ts');
    expect(example).toContain(codeBlockAfter('## Write your handler', 'ts'));
  });

  it('shows the two-subscriber example as bin/subscribers.ts writes it', () => {
    const example = codeBlockAfter('## Several systems on one number', 'ts');
    expect(commentText(file('bin/subscribers.ts'))).toContain(example);
    expect(Object.keys(evaluateSubscribers(example))).toEqual(['bot', 'crm']);
  });

  it('gives subscriber definitions that resolve, with entries that exist', () => {
    const blocks = codeBlocks(section('## Several systems on one number'), 'ts');
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    for (const block of blocks) {
      const resolved = resolveSubscribers(evaluateSubscribers(block));
      for (const subscriber of resolved) {
        expect(existsSync(new URL(`../../../${subscriber.entry}`, import.meta.url)), subscriber.entry).toBe(
          true,
        );
      }
    }
    // The migration keeps the former single subscriber's unprefixed claims.
    const migration = resolveSubscribers(evaluateSubscribers(blocks[1] as string));
    expect(migration.find((subscriber) => subscriber.name === 'default')?.keyNamespace).toBeUndefined();
  });

  it('gives a forward example that resolves to one subscriber of each shape', () => {
    const example = codeBlockAfter('## Forward to a system you already run', 'ts');
    const resolved = resolveSubscribers(evaluateSubscribers(example));
    expect(resolved.map(({ entry, forward }) => [entry, forward?.shape])).toEqual([
      [undefined, 'meta'],
      [undefined, 'event'],
    ]);
  });

  it('links only to files and headings that exist', () => {
    const links = [...readme.matchAll(/\]\(((?:docs|functions|bin)\/[^)#]+)(?:#([^)]+))?\)/g)].map(
      (match) => ({ path: match[1] as string, anchor: match[2] }),
    );
    expect(links.length).toBeGreaterThan(5);
    for (const { path, anchor } of links) {
      expect(() => file(path), path).not.toThrow();
      if (anchor !== undefined) expect(anchorsOf(file(path)), `${path}#${anchor}`).toContain(anchor);
    }
    for (const [, anchor] of readme.matchAll(/\]\(#([^)]+)\)/g)) {
      expect(anchorsOf(readme), `#${anchor}`).toContain(anchor);
    }
  });
});
