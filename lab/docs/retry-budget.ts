/**
 * `npm run retry-budget -- [--maxReceiveCount N] [--retryBaseDelaySeconds S] [--retryMaxDelaySeconds S]
 * [--queueRetentionDays D] [--deadLetterRetentionDays D] [--write-docs]`
 *
 * Prints the retry budget of the default settings, or of the ones given (checked by `resolveSettings`, whose
 * refusal is printed as is, exit 2). `--write-docs` writes the defaults' budget and an ordered message lane's
 * into docs/consumer.md.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type PipelineSettingsInput, resolveSettings, UnsafeSettingsError } from '../../contract/settings.ts';
import { replaceRegion } from './markdown/regions.ts';
import {
  ORDERED_LANE_RETRY_BUDGET_REGION,
  orderedLaneRetryBudgetMarkdown,
  RETRY_BUDGET_REGION,
  retryBudgetMarkdown,
} from './retry-budget-markdown.ts';

const NUMERIC = [
  'maxReceiveCount',
  'retryBaseDelaySeconds',
  'retryMaxDelaySeconds',
  'queueRetentionDays',
  'deadLetterRetentionDays',
] as const;

const OPTIONS = {
  maxReceiveCount: { type: 'string' },
  retryBaseDelaySeconds: { type: 'string' },
  retryMaxDelaySeconds: { type: 'string' },
  queueRetentionDays: { type: 'string' },
  deadLetterRetentionDays: { type: 'string' },
  'write-docs': { type: 'boolean', default: false },
} as const;

let values: ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];
try {
  ({ values } = parseArgs({ options: OPTIONS }));
} catch (error) {
  console.error((error as Error).message);
  process.exit(2);
}

const input: PipelineSettingsInput = Object.fromEntries(
  NUMERIC.flatMap((name) => (values[name] === undefined ? [] : [[name, Number(values[name])]])),
);

try {
  const settings = resolveSettings(input);
  const markdown = retryBudgetMarkdown(settings);
  if (values['write-docs']) {
    if (Object.keys(input).length > 0)
      throw new UnsafeSettingsError('--write-docs writes the defaults only.');
    const path = new URL('../../docs/consumer.md', import.meta.url);
    const page = replaceRegion(readFileSync(path, 'utf8'), RETRY_BUDGET_REGION, markdown);
    writeFileSync(
      path,
      replaceRegion(page, ORDERED_LANE_RETRY_BUDGET_REGION, orderedLaneRetryBudgetMarkdown()),
    );
    console.log('docs/consumer.md: retry budgets of the defaults and of an ordered message lane written');
  } else {
    console.log(markdown);
  }
} catch (error) {
  if (!(error instanceof UnsafeSettingsError)) throw error;
  console.error(error.message);
  process.exitCode = 2;
}
