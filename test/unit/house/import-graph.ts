/**
 * The project's static import graph, read with the TypeScript compiler itself: `ts.preProcessFile` finds every
 * `import`, `import type`, `export … from` and `import('literal')` of a file, and `ts.resolveModuleName`
 * resolves each as tsc does (tsconfig.json's options and `paths` included). A specifier that resolves into
 * node_modules is kept as its package name; `node:` builtins are left out.
 *
 * The checks over the graph say what one part of the house may reach, and where the house runs in a circle.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export interface ImportGraph {
  /** Every file read (repository-relative, `/`-separated) with what it imports: files, or package names. */
  readonly imports: ReadonlyMap<string, readonly string[]>;
}

/** A part of the house and what it must never reach, directly or through any chain of imports. */
export interface Boundary {
  readonly name: string;
  /** Repository-relative folders (`functions/`) or files whose imports are followed. */
  readonly from: readonly string[];
  /** Repository-relative folder prefixes (`lib/`) and package names (`aws-cdk-lib`) it must not reach. */
  readonly never: readonly string[];
}

/** One forbidden reach: the chain of imports from a file of the part to the forbidden target. */
export interface BoundaryBreach {
  readonly boundary: string;
  readonly chain: readonly string[];
}

/**
 * A circle: rooms (files, or folders seen from the folder that holds them) that import each other, with the
 * file imports that tie them.
 */
export interface ImportCycle {
  readonly rooms: readonly string[];
  readonly ties: readonly string[];
}

/** Reads every `.ts` file under `folders` of `root`, and any file of the repository those reach. */
export function readImportGraph(root: string, folders: readonly string[]): ImportGraph {
  const options = compilerOptions(root);
  const cache = ts.createModuleResolutionCache(root, (name) => name, options);
  const imports = new Map<string, readonly string[]>();
  const pending = folders.flatMap((folder) => sourceFiles(root, folder));
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (imports.has(file)) continue;
    const absolute = join(root, file);
    const { importedFiles } = ts.preProcessFile(readFileSync(absolute, 'utf8'), true, true);
    const targets = new Set<string>();
    for (const { fileName: specifier } of importedFiles) {
      const target = resolveImport(root, specifier, absolute, options, cache);
      if (target === undefined) continue;
      targets.add(target);
      if (isRepositoryFile(target) && !imports.has(target) && existsSync(join(root, target))) {
        pending.push(target);
      }
    }
    imports.set(file, [...targets].sort());
  }
  return { imports };
}

/** Every chain by which a file of a boundary's part reaches what the boundary forbids (the shortest per target). */
export function boundaryBreaches(graph: ImportGraph, boundary: Boundary): BoundaryBreach[] {
  const inPart = (file: string) => boundary.from.some((place) => isUnder(file, place));
  const forbidden = (target: string) => boundary.never.some((place) => isUnder(target, place));
  const cameFrom = new Map<string, string | undefined>();
  const queue = [...graph.imports.keys()].filter(inPart).sort();
  for (const file of queue) cameFrom.set(file, undefined);
  const breaches: BoundaryBreach[] = [];
  for (let index = 0; index < queue.length; index++) {
    const file = queue[index] as string;
    for (const target of graph.imports.get(file) ?? []) {
      if (cameFrom.has(target)) continue;
      cameFrom.set(target, file);
      if (forbidden(target)) breaches.push({ boundary: boundary.name, chain: chainTo(target, cameFrom) });
      else if (graph.imports.has(target)) queue.push(target);
    }
  }
  return breaches;
}

/**
 * Every circle among the files under `within`, at every level: two files of one folder that import each other (directly or round
 * a longer loop), and two folders (or a file and a folder) of one parent that do. An import from `a/x/f.ts`
 * to `a/y/g.ts` is an arrow from room `a/x/` to room `a/y/` inside `a/`; from `a/f.ts` to `a/y/g.ts`, from
 * `a/f.ts` to `a/y/`.
 */
export function importCycles(graph: ImportGraph, within: readonly string[]): ImportCycle[] {
  const inside = (file: string) => within.some((place) => isUnder(file, place));
  const arrows = new Map<string, Map<string, string[]>>();
  for (const [file, targets] of graph.imports) {
    if (!inside(file)) continue;
    for (const target of targets) {
      if (!isRepositoryFile(target) || target === file || !inside(target)) continue;
      const [fromRoom, toRoom] = rooms(file, target);
      const ties = arrows.get(fromRoom) ?? new Map<string, string[]>();
      arrows.set(fromRoom, ties);
      ties.set(toRoom, [...(ties.get(toRoom) ?? []), `${file} -> ${target}`]);
    }
  }
  return stronglyConnected(arrows)
    .filter((component) => component.length > 1)
    .map((component) => {
      const members = new Set(component);
      const ties = component.flatMap((room) =>
        [...(arrows.get(room) ?? new Map<string, string[]>())]
          .filter(([toRoom]) => members.has(toRoom))
          .flatMap(([, files]) => files),
      );
      return { rooms: [...component].sort(), ties: ties.sort() };
    });
}

function compilerOptions(root: string): ts.CompilerOptions {
  const configPath = join(root, 'tsconfig.json');
  if (!existsSync(configPath)) {
    return {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      allowImportingTsExtensions: true,
      noEmit: true,
    };
  }
  const { config, error } = ts.readConfigFile(configPath, ts.sys.readFile);
  if (error !== undefined) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
  return ts.parseJsonConfigFileContent(config, ts.sys, root, undefined, configPath).options;
}

function resolveImport(
  root: string,
  specifier: string,
  containingFile: string,
  options: ts.CompilerOptions,
  cache: ts.ModuleResolutionCache,
): string | undefined {
  if (specifier.startsWith('node:')) return undefined;
  const { resolvedModule } = ts.resolveModuleName(specifier, containingFile, options, ts.sys, cache);
  if (resolvedModule === undefined) {
    // A file that does not exist (yet) is still where the import points; tsc reports it missing.
    if (specifier.startsWith('.')) return repositoryPath(root, join(dirname(containingFile), specifier));
    return isBuiltin(specifier) ? undefined : packageName(specifier);
  }
  const target = repositoryPath(root, resolvedModule.resolvedFileName);
  if (resolvedModule.isExternalLibraryImport || target.startsWith('node_modules/')) {
    return packageName(specifier);
  }
  return target;
}

/** `@aws-sdk/client-sqs/dist` → `@aws-sdk/client-sqs`; `aws-cdk-lib/aws-sqs` → `aws-cdk-lib`. */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

function repositoryPath(root: string, absolute: string): string {
  return relative(root, absolute).split(sep).join('/');
}

function isRepositoryFile(target: string): boolean {
  return target.endsWith('.ts') || target.endsWith('.json') || target.endsWith('.js');
}

function isUnder(target: string, place: string): boolean {
  return place.endsWith('/') ? target.startsWith(place) : target === place;
}

function sourceFiles(root: string, folder: string): string[] {
  const absolute = join(root, folder);
  if (!existsSync(absolute)) return [];
  return readdirSync(absolute, { recursive: true, encoding: 'utf8' })
    .map((name) => `${folder.replace(/\/$/, '')}/${name.split(sep).join('/')}`)
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts') && !file.includes('node_modules/'));
}

/** The two rooms an import joins, seen from the deepest folder that holds both files. */
function rooms(from: string, to: string): [string, string] {
  const a = from.split('/');
  const b = to.split('/');
  let shared = 0;
  while (shared < a.length - 1 && shared < b.length - 1 && a[shared] === b[shared]) shared++;
  const room = (parts: string[]) =>
    parts.slice(0, shared + 1).join('/') + (parts.length > shared + 1 ? '/' : '');
  return [room(a), room(b)];
}

function chainTo(target: string, cameFrom: ReadonlyMap<string, string | undefined>): string[] {
  const chain = [target];
  for (let step = cameFrom.get(target); step !== undefined; step = cameFrom.get(step)) chain.unshift(step);
  return chain;
}

/** Tarjan's strongly connected components over the room arrows. */
function stronglyConnected(arrows: ReadonlyMap<string, ReadonlyMap<string, unknown>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (room: string) => {
    index.set(room, index.size);
    low.set(room, index.get(room) as number);
    stack.push(room);
    onStack.add(room);
    for (const next of arrows.get(room)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(room, Math.min(low.get(room) as number, low.get(next) as number));
      } else if (onStack.has(next)) {
        low.set(room, Math.min(low.get(room) as number, index.get(next) as number));
      }
    }
    if (low.get(room) === index.get(room)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== room);
      components.push(component);
    }
  };
  for (const room of [...arrows.keys()].sort()) if (!index.has(room)) visit(room);
  return components;
}

/** The repository root, two folders above this file's folder. */
export const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
