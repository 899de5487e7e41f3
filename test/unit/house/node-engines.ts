/**
 * The Node.js versions the README names, and the lockfile packages that would refuse one (docs/deploy.md,
 * "Node.js versions"): npm warns `EBADENGINE` at install for every package whose `engines.node` excludes the
 * running Node, so a named version that one package refuses is a version with a warning.
 */
import semver from 'semver';

interface LockEntry {
  readonly version?: string;
  readonly engines?: unknown;
  readonly link?: boolean;
  readonly os?: readonly string[];
  readonly cpu?: readonly string[];
}

export interface PackageLock {
  readonly packages: Readonly<Record<string, LockEntry>>;
}

/** The lowest version of each Node line an `engines.node` range allows: `^22.13.0 || >=24.0.0` → 22.13.0, 24.0.0. */
export function lowestVersionsOf(range: string): string[] {
  return range.split('||').map((part) => {
    const lowest = semver.minVersion(part.trim());
    if (lowest === null)
      throw new Error(`engines.node "${range}" has a part with no lowest version: "${part}"`);
    return lowest.version;
  });
}

/**
 * Packages of the lockfile that npm would install here (their `os` and `cpu` admit this machine's, as npm
 * skips the others) and whose `engines.node` refuses Node `version`.
 */
export function packagesRefusingNode(
  lock: PackageLock,
  version: string,
  platform: { readonly os: string; readonly cpu: string } = { os: process.platform, cpu: process.arch },
): string[] {
  return Object.entries(lock.packages)
    .filter(([path, entry]) => path.includes('node_modules/') && entry.link !== true)
    .filter(([, entry]) => admits(entry.os, platform.os) && admits(entry.cpu, platform.cpu))
    .flatMap(([path, entry]) => {
      const node = (entry.engines as { node?: unknown } | undefined)?.node;
      if (typeof node !== 'string' || semver.satisfies(version, node)) return [];
      const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
      return [`${name}@${entry.version} (node ${node})`];
    })
    .sort();
}

/** npm's `os`/`cpu` lists: absent admits all; `!x` refuses x; otherwise the value must be listed. */
function admits(list: readonly string[] | undefined, value: string): boolean {
  if (list === undefined || list.length === 0) return true;
  if (list.includes(`!${value}`)) return false;
  const allowed = list.filter((item) => !item.startsWith('!'));
  return allowed.length === 0 || allowed.includes(value);
}

/** How the README names the Node versions: `Node.js 24 (the Lambda runtime) or 22.13+`. */
export function readmeNodeRequirement(versions: readonly string[]): string {
  const sorted = [...versions].sort(semver.compare);
  const newest = semver.major(sorted.at(-1) ?? '');
  const older = sorted.slice(0, -1).map((version) => `${semver.major(version)}.${semver.minor(version)}+`);
  return [`Node.js ${newest} (the Lambda runtime)`, ...older].join(' or ');
}
