/**
 * The package boundary (issue 20 §7): the runtime (`functions/`, `contract/`) reaches no construct, tool or test
 * code and no CDK library; the construct (`lib/`) reaches no tool or test code; and nothing runs in a circle:
 * no two top-level folders import each other (directly or round a loop), no two files do. The graph is read
 * with the TypeScript compiler (import-graph.ts); the first block proves, on small scratch trees, that each
 * check fails on the edge that breaks it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Boundary,
  boundaryBreaches,
  type ImportCycle,
  type ImportGraph,
  importCycles,
  PROJECT_ROOT,
  readImportGraph,
} from './import-graph.ts';

/** Every folder of source code; tests, fixtures and generated output are not part of the house. */
const HOUSE = ['bin/', 'contract/', 'functions/', 'lib/', 'local/', 'ops/', 'tools/', 'bench/'];

const RUNTIME: Boundary = {
  name: 'runtime',
  from: ['functions/', 'contract/'],
  never: [
    'lib/',
    'bin/',
    'local/',
    'ops/',
    'tools/',
    'bench/',
    'test/',
    'aws-cdk-lib',
    'constructs',
    'aws-cdk',
    'cdk-nag',
  ],
};

const CONSTRUCT: Boundary = {
  name: 'construct',
  from: ['lib/'],
  never: ['bin/', 'local/', 'ops/', 'tools/', 'bench/', 'test/'],
};

/** The loops issue 20 §7 named, each as two rooms that must not stand in one circle. */
const NAMED_LOOPS: readonly [string, string][] = [
  ['ops/', 'local/'],
  ['local/', 'bench/'],
  ['contract/environment.ts', 'contract/subscribers.ts'],
  ['lib/validate-props.ts', 'lib/whatsapp-webhook-dedup.ts'],
  ['local/stack/local-server.ts', 'local/stack/operator-views.ts'],
  // The consumer's queue adapters implement ports the queue declares itself (functions/queue/consumer-queue-port.ts).
  ['functions/consumer/', 'functions/queue/'],
  ['ops/adapters/', 'ops/target/'],
];

/** A circle of top-level folders (`ops/`, `local/`) or of files that stand side by side (`a/x.ts`, `a/y.ts`). */
function isTopLevelOrFileCircle(cycle: ImportCycle): boolean {
  const topLevel = cycle.rooms.every((room) => room.split('/').length <= 2);
  const files = cycle.rooms.every((room) => !room.endsWith('/'));
  return topLevel || files;
}

const describeCycle = (cycle: ImportCycle) => `${cycle.rooms.join(' <-> ')}: ${cycle.ties.join(', ')}`;

describe('the import checker, on scratch trees', () => {
  let scratch: string;

  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'import-boundaries-'));
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  /** Writes the files of one small tree and reads its graph. */
  function tree(name: string, files: Record<string, string>): ImportGraph {
    const root = join(scratch, name);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    return readImportGraph(root, HOUSE);
  }

  it('finds the chain by which the runtime reaches a tool, through any kind of import', () => {
    const graph = tree('runtime-reaches-local', {
      'functions/receiver.ts': "import { names } from '../contract/names.ts';\nexport const n = names;\n",
      'contract/names.ts': "export type { Port } from './port.ts';\nexport const names = 1;\n",
      'contract/port.ts':
        "import type { LocalPort } from '../local/port.ts';\nexport type Port = LocalPort;\n",
      'local/port.ts': 'export type LocalPort = number;\n',
    });
    expect(boundaryBreaches(graph, RUNTIME)).toEqual([
      { boundary: 'runtime', chain: ['contract/port.ts', 'local/port.ts'] },
    ]);
  });

  it('finds a CDK package behind a dynamic import, and a test helper behind a re-export', () => {
    const graph = tree('runtime-reaches-cdk', {
      'functions/consumer.ts':
        "export * from './helpers.ts';\nexport const load = () => import('aws-cdk-lib/aws-sqs');\n",
      'functions/helpers.ts': "export { sign } from '../test/support/sign.ts';\n",
      'test/support/sign.ts': 'export const sign = 1;\n',
    });
    expect(boundaryBreaches(graph, RUNTIME).map((breach) => breach.chain)).toEqual([
      ['functions/consumer.ts', 'aws-cdk-lib'],
      ['functions/helpers.ts', 'test/support/sign.ts'],
    ]);
  });

  it('finds the construct importing a tool, and passes it when it does not', () => {
    const breaking = tree('construct-reaches-ops', {
      'lib/construct.ts': "import { DEFAULTS } from './defaults.ts';\nexport const d = DEFAULTS;\n",
      'lib/defaults.ts': "import { PORT } from '../ops/port.ts';\nexport const DEFAULTS = PORT;\n",
      'ops/port.ts': "import { DEFAULTS } from '../lib/defaults.ts';\nexport const PORT = DEFAULTS;\n",
    });
    expect(boundaryBreaches(breaking, CONSTRUCT).map((breach) => breach.chain)).toEqual([
      ['lib/defaults.ts', 'ops/port.ts'],
    ]);
    const keeping = tree('construct-keeps', {
      'lib/construct.ts': "import { DEFAULTS } from './defaults.ts';\nexport const d = DEFAULTS;\n",
      'lib/defaults.ts': "import { NAME } from '../contract/name.ts';\nexport const DEFAULTS = NAME;\n",
      'contract/name.ts': 'export const NAME = 1;\n',
    });
    expect(boundaryBreaches(keeping, CONSTRUCT)).toEqual([]);
  });

  it('finds two folders in a circle through different files, and two files in one', () => {
    const graph = tree('circles', {
      'ops/commands/dlq.ts': "import type { Info } from '../../local/info.ts';\nexport type I = Info;\n",
      'local/info.ts': 'export interface Info { readonly port: number }\n',
      'local/stack/views.ts':
        "import { dlq } from '../../ops/run.ts';\nimport type { Server } from './server.ts';\nexport const v = (s: Server) => [s, dlq];\n",
      'local/stack/server.ts':
        "import { v } from './views.ts';\nexport interface Server { readonly v: typeof v }\n",
      'ops/run.ts': 'export const dlq = 1;\n',
    });
    const cycles = importCycles(graph, HOUSE).map((cycle) => ({ rooms: cycle.rooms, ties: cycle.ties }));
    expect(cycles).toEqual(
      expect.arrayContaining([
        {
          rooms: ['local/', 'ops/'],
          ties: ['local/stack/views.ts -> ops/run.ts', 'ops/commands/dlq.ts -> local/info.ts'],
        },
        {
          rooms: ['local/stack/server.ts', 'local/stack/views.ts'],
          ties: [
            'local/stack/server.ts -> local/stack/views.ts',
            'local/stack/views.ts -> local/stack/server.ts',
          ],
        },
      ]),
    );
    expect(cycles).toHaveLength(2);
  });

  it('finds no circle where the imports run one way', () => {
    const graph = tree('one-way', {
      'bench/run.ts': "import { start } from '../local/start.ts';\nexport const r = start;\n",
      'local/start.ts': "import { view } from '../ops/view.ts';\nexport const start = view;\n",
      'ops/view.ts': "import { PORT } from '../tools/api.ts';\nexport const view = PORT;\n",
      'tools/api.ts': 'export const PORT = 3000;\n',
    });
    expect(importCycles(graph, HOUSE)).toEqual([]);
  });
});

describe('the house', () => {
  let graph: ImportGraph;

  beforeAll(() => {
    graph = readImportGraph(PROJECT_ROOT, HOUSE);
  });

  it('reads the whole house', () => {
    for (const file of [
      'functions/handlers.ts',
      'lib/index.ts',
      'local/start.ts',
      'ops/cli.ts',
      'bench/run.ts',
    ]) {
      expect(graph.imports.has(file), file).toBe(true);
    }
  });

  it('the runtime (functions/, contract/) reaches no construct, tool or test code and no CDK library', () => {
    expect(boundaryBreaches(graph, RUNTIME).map((breach) => breach.chain.join(' -> '))).toEqual([]);
  });

  it('the construct (lib/) reaches no tool or test code', () => {
    expect(boundaryBreaches(graph, CONSTRUCT).map((breach) => breach.chain.join(' -> '))).toEqual([]);
  });

  it('no two top-level folders, and no two files, import each other', () => {
    expect(importCycles(graph, HOUSE).filter(isTopLevelOrFileCircle).map(describeCycle)).toEqual([]);
  });

  it.each(NAMED_LOOPS)('%s and %s stand in no circle', (a, b) => {
    const joined = importCycles(graph, HOUSE).filter(
      (cycle) =>
        cycle.rooms.some((room) => room === a || room.startsWith(a)) &&
        cycle.rooms.some((room) => room === b || room.startsWith(b)),
    );
    expect(joined.map(describeCycle)).toEqual([]);
  });
});
