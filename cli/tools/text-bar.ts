const BAR_WIDTH = 28;

/**
 * A bar of `width` cells, `fraction` of them filled: `npm run outage-drill`'s and `ops replay`'s progress
 * bars.
 */
export function textBar(fraction: number, width = BAR_WIDTH): string {
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * width);
  return `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
}
