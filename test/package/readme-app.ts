/**
 * The files of the README's "Use it in your own CDK app": each `ts` block there starts with a `// PATH`
 * line naming the file it is in a user's project. The installed-path test writes them verbatim into its app,
 * and the README test checks their shape, so that the README shows what was installed and run.
 */
import { readFileSync } from 'node:fs';

export const README_APP_HEADING = '## Use it in your own CDK app';

/** The longest the README's stack may be: short enough to read whole before installing anything. */
export const README_STACK_MAX_LINES = 20;

export interface ReadmeApp {
  /** The install commands by name, for once the packages are on the registry, as shown. */
  readonly install: string;
  /** The commands that build the tarballs from a clone and install them, as shown (until then). */
  readonly fromTarball: string;
  /** Path in the user's project → content, in README order: the CDK app first, then its handler module. */
  readonly files: Readonly<Record<string, string>>;
}

export function readmeApp(
  readme: string = readFileSync(new URL('../../README.md', import.meta.url), 'utf8'),
): ReadmeApp {
  const start = readme.indexOf(`\n${README_APP_HEADING}\n`);
  if (start < 0) throw new Error(`README.md has no "${README_APP_HEADING}" section`);
  const next = readme.indexOf('\n## ', start + README_APP_HEADING.length + 1);
  const section = readme.slice(start, next < 0 ? undefined : next);
  const blocks = (language: string) =>
    [...section.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map(
      (match) => match[1] as string,
    );
  const install = blocks('bash').find((block) => /^npm install whatsapp-webhook-dedup\b/m.test(block));
  const fromTarball = blocks('bash').find((block) => /\bnpm pack\b/.test(block));
  if (install === undefined || fromTarball === undefined) {
    throw new Error(`"${README_APP_HEADING}" shows no install line by name, or none from the tarballs`);
  }
  const files: Record<string, string> = {};
  for (const block of blocks('ts')) {
    const path = /^\/\/ (\S+\.ts)\n/.exec(block)?.[1];
    if (path === undefined)
      throw new Error(`a ts block of "${README_APP_HEADING}" does not start with // PATH`);
    files[path] = block;
  }
  return { install, fromTarball, files };
}
