/**
 * The house's doors, one way (docs/design.md, "Three rooms"): the construct (bin/, lib/, functions/,
 * contract/) is published and reaches neither the CLI (cli/) nor the lab (lab/); the CLI is published and
 * reaches the construct by its package name only, never the lab; the lab, never published, may reach both.
 * No source file reaches a test folder. `npm run lint` runs these rules; test/unit/house/ proves each fires.
 */
const TEST_FILE = '(^|/)test/|\\.test\\.ts$';
const CONSTRUCT = '^(bin|lib|functions|contract)/';
const RUNTIME = '^(functions|contract)/';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'No two modules import each other, directly or round a loop (a type-only import closes no loop).',
      from: {},
      to: { circular: true },
    },
    {
      name: 'source-reaches-no-test',
      severity: 'error',
      comment:
        'Tests, their support and fixtures are for tests: a source file that needs one takes it out of test/.',
      from: { pathNot: TEST_FILE },
      to: { path: TEST_FILE },
    },
    {
      name: 'construct-reaches-no-tool',
      severity: 'error',
      comment:
        'The published construct carries no tooling: the CLI and the lab stand on it, never the reverse.',
      from: { path: CONSTRUCT },
      to: { path: '^(cli|lab)/' },
    },
    {
      name: 'runtime-reaches-no-cdk',
      severity: 'error',
      comment: 'The Lambda code (functions/) and what it shares with lib/ (contract/) load no CDK code.',
      from: { path: RUNTIME },
      to: { path: ['^(lib|bin)/', '(^|/)node_modules/(aws-cdk-lib|constructs|aws-cdk|cdk-nag)/'] },
    },
    {
      name: 'contract-reaches-neither-side',
      severity: 'error',
      comment: 'contract/ is shared by lib/ and functions/ and imports neither, nor the AWS SDK.',
      from: { path: '^contract/' },
      to: { path: ['^(lib|functions)/', '(^|/)node_modules/@aws-sdk/'] },
    },
    {
      name: 'functions-and-lib-apart',
      severity: 'error',
      comment: 'lib/ knows the Lambda code only by its entry path; functions/ never imports the CDK code.',
      from: { path: '^(lib|functions)/' },
      to: { path: '^(lib|functions)/', pathNot: '^$1/' },
    },
    {
      name: 'cli-reaches-no-lab',
      severity: 'error',
      comment: 'The published CLI carries no lab code: benchmarks, checkers and doc generators stay private.',
      from: { path: '^cli/', pathNot: TEST_FILE },
      to: { path: '^lab/' },
    },
    {
      name: 'cli-reaches-construct-by-name',
      severity: 'error',
      comment:
        "Installed, the CLI finds the construct in the user's node_modules: import whatsapp-webhook-dedup/…, not a relative path.",
      from: { path: '^cli/', pathNot: TEST_FILE },
      to: { path: CONSTRUCT, dependencyTypesNot: ['aliased-tsconfig'] },
    },
    {
      name: 'nothing-reaches-the-lab',
      severity: 'error',
      comment:
        'The lab is never published: no construct or CLI source imports it (tests may, to record their runs).',
      from: { pathNot: ['^lab/', TEST_FILE] },
      to: { path: '^lab/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['(^|/)(dist|cdk\\.out|\\.cache|\\.data|out)/', '(^|/)test/fixtures/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.d.ts', '.json'],
    },
  },
};
