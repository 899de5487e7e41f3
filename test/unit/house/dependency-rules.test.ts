/**
 * The house's doors (.dependency-cruiser.cjs; `npm run lint:imports` checks the real tree). Each rule is proved
 * here on a small scratch tree that breaks it, through the kinds of import that hide an edge (a type import, a
 * re-export, a dynamic import, a tsconfig path), and a tree that keeps every rule passes.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cruise, type IReporterOutput } from 'dependency-cruiser';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const RULES = createRequire(import.meta.url)('../../../.dependency-cruiser.cjs') as {
  forbidden: unknown[];
  options: Record<string, unknown>;
};

const TSCONFIG = JSON.stringify({
  compilerOptions: {
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    allowImportingTsExtensions: true,
    noEmit: true,
    paths: { 'whatsapp-webhook-dedup/*': ['./*.ts'] },
  },
});

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'dependency-rules-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The rules a tree of `files` breaks, each as `rule: from → to`. */
async function violations(name: string, files: Record<string, string>): Promise<string[]> {
  const root = join(scratch, name);
  for (const [path, text] of Object.entries({ 'tsconfig.json': TSCONFIG, ...files })) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const cwd = process.cwd();
  process.chdir(root);
  try {
    const folders = [...new Set(Object.keys(files).map((path) => path.split('/')[0] as string))];
    const tsConfig = extractTSConfig(join(root, 'tsconfig.json'));
    const result = (await cruise(
      folders,
      {
        ruleSet: { forbidden: RULES.forbidden },
        ...RULES.options,
        tsConfig: { fileName: 'tsconfig.json' },
        validate: true,
      } as never,
      { tsConfig: join(root, 'tsconfig.json') } as never,
      { tsConfig } as never,
    )) as IReporterOutput;
    const output = result.output as {
      summary: { violations: { rule: { name: string }; from: string; to: string }[] };
    };
    return output.summary.violations.map(({ rule, from, to }) => `${rule.name}: ${from} → ${to}`).sort();
  } finally {
    process.chdir(cwd);
  }
}

describe('the dependency rules, on scratch trees', () => {
  it('pass a house that keeps every door', async () => {
    expect(
      await violations('keeps', {
        'contract/names.ts': 'export const NAME = 1;\n',
        'functions/receiver.ts': "import { NAME } from '../contract/names.ts';\nexport const r = NAME;\n",
        'lib/construct.ts': "import { NAME } from '../contract/names.ts';\nexport const c = NAME;\n",
        'cli/start.ts':
          "import { r } from 'whatsapp-webhook-dedup/functions/receiver';\nexport const s = r;\n",
        'lab/bench.ts':
          "import { s } from '../cli/start.ts';\nimport { c } from '../lib/construct.ts';\nexport const b = [s, c];\n",
        'test/receiver.test.ts': "import { b } from '../lab/bench.ts';\nexport const t = b;\n",
      }),
    ).toEqual([]);
  });

  it('refuse the runtime reaching the CDK code or a tool, through a type import and a re-export', async () => {
    expect(
      await violations('runtime', {
        'functions/receiver.ts':
          "export * from './helpers.ts';\nimport type { Props } from '../lib/props.ts';\nexport type P = Props;\n",
        'functions/helpers.ts': "export { port } from '../cli/port.ts';\n",
        'lib/props.ts': 'export interface Props { readonly n: number }\n',
        'cli/port.ts': 'export const port = 1;\n',
      }),
    ).toEqual([
      'construct-reaches-no-tool: functions/helpers.ts → cli/port.ts',
      'functions-and-lib-apart: functions/receiver.ts → lib/props.ts',
      'runtime-reaches-no-cdk: functions/receiver.ts → lib/props.ts',
    ]);
  });

  it('refuse contract/ reaching either side, and lib/ reaching the Lambda code', async () => {
    expect(
      await violations('contract', {
        'contract/settings.ts': "import { d } from '../lib/defaults.ts';\nexport const s = d;\n",
        'lib/defaults.ts': "import { h } from '../functions/handlers.ts';\nexport const d = h;\n",
        'functions/handlers.ts': 'export const h = 1;\n',
      }),
    ).toEqual([
      'contract-reaches-neither-side: contract/settings.ts → lib/defaults.ts',
      'functions-and-lib-apart: lib/defaults.ts → functions/handlers.ts',
      'runtime-reaches-no-cdk: contract/settings.ts → lib/defaults.ts',
    ]);
  });

  it('refuse the CLI reaching the lab, or the construct by a relative path', async () => {
    expect(
      await violations('cli', {
        'cli/capacity.ts':
          "import { run } from '../lab/simulation.ts';\nimport { NAME } from '../contract/names.ts';\nexport const c = [run, NAME];\n",
        'lab/simulation.ts': 'export const run = 1;\n',
        'contract/names.ts': 'export const NAME = 1;\n',
      }),
    ).toEqual([
      'cli-reaches-construct-by-name: cli/capacity.ts → contract/names.ts',
      'cli-reaches-no-lab: cli/capacity.ts → lab/simulation.ts',
      'nothing-reaches-the-lab: cli/capacity.ts → lab/simulation.ts',
    ]);
  });

  it('refuse a source file reaching a test folder, even by a dynamic import', async () => {
    expect(
      await violations('tests', {
        'lab/bench.ts': "export const load = () => import('../test/support/bodies.ts');\n",
        'test/support/bodies.ts': 'export const bodies = 1;\n',
      }),
    ).toEqual(['source-reaches-no-test: lab/bench.ts → test/support/bodies.ts']);
  });

  it('refuse a loop of imports, a type-only one included', async () => {
    expect(
      await violations('loops', {
        'cli/server.ts': "import { views } from './views.ts';\nexport const server = () => views;\n",
        'cli/views.ts': "import { server } from './server.ts';\nexport const views = () => server;\n",
        'cli/queue.ts':
          "import { handles } from './handles.ts';\nexport interface Message { readonly id: string }\nexport const q = handles;\n",
        'cli/handles.ts':
          "import type { Message } from './queue.ts';\nexport const handles = (m: Message) => m.id;\n",
      }),
    ).toEqual(['no-circular: cli/handles.ts → cli/queue.ts', 'no-circular: cli/server.ts → cli/views.ts']);
  });
});
