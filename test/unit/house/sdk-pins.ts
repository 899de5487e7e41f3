/**
 * How the AWS SDK is pinned (docs/decisions.md, "SDK upgrades go together"): every `@aws-sdk/*`
 * dependency at an exact version; one copy of each SDK package in the lockfile, so that the clients share
 * one `@aws-sdk/core` and one `@smithy/*` set (the clients' own ranges on those are carets, and an upgrade
 * of one client alone can leave two); and no SDK package that needs a newer Node than `engines` allows.
 */

interface PackageJson {
  readonly engines?: { readonly node?: string };
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly devDependencies?: Readonly<Record<string, string>>;
}

interface PackageLock {
  readonly packages: Readonly<Record<string, { readonly version?: string; readonly engines?: unknown }>>;
}

const SDK_PACKAGE = /^@(aws-sdk|smithy|aws-crypto)\//;

/** `@aws-sdk/*` dependencies not pinned to one exact version. */
export function unpinnedSdkDependencies(manifest: PackageJson): string[] {
  return Object.entries({ ...manifest.dependencies, ...manifest.devDependencies })
    .filter(([name, version]) => name.startsWith('@aws-sdk/') && !/^\d+\.\d+\.\d+$/.test(version))
    .map(([name, version]) => `${name}@${version}`);
}

/** SDK packages the lockfile holds in more than one version. */
export function duplicatedSdkPackages(lock: PackageLock): string[] {
  const versions = new Map<string, Set<string>>();
  for (const [path, entry] of Object.entries(lock.packages)) {
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    if (!SDK_PACKAGE.test(name) || entry.version === undefined) continue;
    versions.set(name, (versions.get(name) ?? new Set()).add(entry.version));
  }
  return [...versions]
    .filter(([, found]) => found.size > 1)
    .map(([name, found]) => `${name}: ${[...found].sort().join(', ')}`);
}

/** The lowest Node.js major an `engines.node` range such as `^20.19.0 || ^22.12.0 || >=24.0.0` allows. */
export function lowestNodeMajor(range: string): number {
  const majors = range.split('||').map((part) => Number(/^\s*(?:\^|~|>=)?\s*v?(\d+)/.exec(part)?.[1]));
  if (majors.length === 0 || majors.some((major) => !Number.isInteger(major))) {
    throw new Error(`engines.node "${range}" is not a range of the form ^A.B.C || >=D.E.F`);
  }
  return Math.min(...majors);
}

/** SDK packages of the lockfile whose `engines.node` (`>=N…`) excludes Node `major`, or that say it otherwise. */
export function sdkPackagesBeyondNode(lock: PackageLock, major: number): string[] {
  const beyond = new Set<string>();
  for (const [path, entry] of Object.entries(lock.packages)) {
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    if (!SDK_PACKAGE.test(name)) continue;
    const node = (entry.engines as { node?: unknown } | undefined)?.node;
    if (node === undefined) continue;
    const floor = typeof node === 'string' ? /^>=\s*v?(\d+)(\.\d+){0,2}$/.exec(node.trim()) : null;
    if (floor === null || Number(floor[1]) > major)
      beyond.add(`${name}@${entry.version} (node ${String(node)})`);
  }
  return [...beyond].sort();
}
