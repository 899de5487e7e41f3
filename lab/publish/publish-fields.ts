/**
 * `prepublishOnly` of both published packages: `npm publish` stops unless the manifest carries what a
 * registry page needs to lead a user back to the project. The repository's public address is not known
 * until it is published, so it is not guessed: the fields are filled in then, and this gate makes sure
 * they are.
 *
 * Usage: tsx lab/publish/publish-fields.ts <package directory>
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

interface Manifest {
  readonly repository?: unknown;
  readonly homepage?: unknown;
  readonly bugs?: unknown;
  readonly license?: unknown;
  readonly keywords?: unknown;
}

/** The fields a published manifest lacks, each with what it must hold. */
export function missingPublishFields(manifest: Manifest): string[] {
  const missing: string[] = [];
  const repository = manifest.repository as { url?: unknown } | string | undefined;
  const repositoryUrl = typeof repository === 'string' ? repository : repository?.url;
  if (typeof repositoryUrl !== 'string' || !/^(git\+)?https:\/\//.test(repositoryUrl)) {
    missing.push('repository: { "type": "git", "url": "git+https://…" } (and "directory" for the CLI)');
  }
  if (typeof manifest.homepage !== 'string' || !manifest.homepage.startsWith('https://')) {
    missing.push('homepage: "https://…" (the README on the repository)');
  }
  const bugs = manifest.bugs as { url?: unknown } | string | undefined;
  if (typeof (typeof bugs === 'string' ? bugs : bugs?.url) !== 'string')
    missing.push('bugs: { "url": "https://…" }');
  if (typeof manifest.license !== 'string') missing.push('license');
  if (!Array.isArray(manifest.keywords) || manifest.keywords.length === 0) missing.push('keywords');
  return missing;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const directory = process.argv[2] ?? '.';
  const missing = missingPublishFields(JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')));
  if (missing.length > 0) {
    process.stderr.write(
      `${join(directory, 'package.json')} is not ready to publish; set:\n${missing.map((field) => `  ${field}\n`).join('')}`,
    );
    process.exitCode = 1;
  }
}
