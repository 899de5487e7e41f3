/**
 * Finds the figures of a markdown page that look like what a bench, a simulation or a report produces, outside
 * its generated regions (lab/test/docs/generated-figures.test.ts fails on any that is not a listed constant).
 */

/** A number as the pages write it: 5, 2.86, 1,298. */
const NUM = String.raw`\d+(?:[.,]\d+)*`;
const pattern = (source: string) => new RegExp(source.replaceAll('NUM', NUM), 'g');

/**
 * What counts as a produced figure; each pattern's whole match is the figure reported. A multiplication between
 * two quantities (`6 × the function timeout`) matches the ratio pattern too, and is listed as a constant.
 */
export const FIGURE_PATTERNS: Readonly<Record<string, RegExp>> = {
  // ×2.86, × 3, 2.5×, 3x
  ratio: pattern(String.raw`×\s?NUM|\bNUM\s?×|\b\d+(?:\.\d+)?x\b`),
  dollars: pattern(String.raw`\$\s?NUM`),
  percent: pattern(String.raw`\bNUM\s?%`),
  // 12 ms, 0.5ms, and a trace's clock: 0.945s
  duration: pattern(String.raw`\bNUM\s?ms\b|\b\d+\.\d+s\b`),
  // 534 events/s, 8/s, 20 requests per second
  rate: pattern(String.raw`\bNUM\s?(?:[a-z]+\s?)?/\s?s\b|\bNUM [a-z]+ (?:per|a) second\b`),
  // 5000 schedules, 747 faults, 1005 effects, and a run's output: "faults 747", "effects: 17626"
  count: pattern(
    String.raw`\bNUM\s(?:simulated\s)?(?:schedules|faults|effects|double effects|extra effects|violations)\b|\b(?:schedules|faults|effects|doubles|violations)(?: [a-z]+)?:?\sNUM`,
  ),
  // A reliability run's report line: "35 failed SendMessageBatch calls", "40 events effected", "12 events run
  // from them", "2 parts stored", and its pairs of counts ("bit flips 8/39", enqueued/quarantined)
  runCount: pattern(
    String.raw`\bNUM failed [A-Za-z]+ calls\b|\bNUM events (?:effected|run)\b|\bNUM parts? stored\b|\bNUM/NUM\b`,
  ),
};

export interface HandTypedFigure {
  readonly figure: string;
  readonly kind: string;
  /** 1-based line on the page. */
  readonly line: number;
}

const REGION = /(<!-- generated:([\w-]+) -->)[\s\S]*?(<!-- \/generated:\2 -->)/g;

/** The names of the page's generated regions, in order. */
export function regionNames(page: string): string[] {
  return [...page.matchAll(REGION)].map((match) => match[2] as string);
}

/** The page with every generated region's content replaced by as many empty lines: what was typed by hand. */
export function withoutRegions(page: string): string {
  return page.replace(REGION, (whole, open: string, _name: string, close: string) => {
    const lines = whole.split('\n').length - 1;
    return `${open}${'\n'.repeat(lines)}${close}`;
  });
}

/** Every produced-looking figure typed by hand on the page, with its line. */
export function handTypedFigures(page: string): HandTypedFigure[] {
  const lines = withoutRegions(page).split('\n');
  const found: HandTypedFigure[] = [];
  lines.forEach((text, index) => {
    for (const [kind, pattern] of Object.entries(FIGURE_PATTERNS)) {
      for (const match of text.matchAll(pattern)) {
        found.push({ figure: match[0].trim(), kind, line: index + 1 });
      }
    }
  });
  return found;
}

/** The page's hand-typed figures that are not among `allowed` (exact figure texts). */
export function unlistedFigures(page: string, allowed: readonly string[]): HandTypedFigure[] {
  const listed = new Set(allowed);
  return handTypedFigures(page).filter((found) => !listed.has(found.figure));
}
