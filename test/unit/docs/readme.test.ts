import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');

function codeBlockAfter(heading: string, language: string): string {
  const section = readme.slice(readme.indexOf(heading));
  const match = section.match(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``));
  if (!match?.[1]) throw new Error(`no ${language} block after ${heading}`);
  return match[1];
}

describe('README', () => {
  it('shows the two newcomer commands on its first screen', () => {
    const firstScreen = readme.split('\n').slice(0, 25).join('\n');
    expect(firstScreen).toContain('npm start');
    expect(firstScreen).toContain('npm test');
  });

  it('shows the handler example verbatim from the typechecked example file', () => {
    const example = readFileSync(
      new URL('../../../functions/examples/crm-ticket-handlers.ts', import.meta.url),
      'utf8',
    );
    expect(example).toContain(codeBlockAfter('## Write your handler', 'ts'));
  });

  it('links only to docs pages that exist', () => {
    const links = [...readme.matchAll(/\]\((docs\/[^)]+|functions\/[^)]+)\)/g)].map((m) => m[1] as string);
    expect(links.length).toBeGreaterThan(5);
    for (const link of links) {
      expect(() => readFileSync(new URL(`../../../${link}`, import.meta.url)), link).not.toThrow();
    }
  });
});
