/**
 * Generated regions of hand-written pages: `<!-- generated:NAME -->` … `<!-- /generated:NAME -->`. The text
 * between the markers is replaced whole; everything else on the page is left as it is.
 */
export function replaceRegion(page: string, name: string, content: string): string {
  const { start, end } = bounds(page, name);
  return `${page.slice(0, start)}\n${content.trim()}\n${page.slice(end)}`;
}

export function readRegion(page: string, name: string): string {
  const { start, end } = bounds(page, name);
  return page.slice(start, end).trim();
}

function bounds(page: string, name: string): { start: number; end: number } {
  const open = `<!-- generated:${name} -->`;
  const close = `<!-- /generated:${name} -->`;
  const start = page.indexOf(open);
  const end = page.indexOf(close);
  if (start < 0 || end < start) throw new Error(`No generated region "${name}" (${open} … ${close}).`);
  return { start: start + open.length, end };
}
