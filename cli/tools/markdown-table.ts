/** Markdown tables laid out as the repository's formatter lays them out: columns padded to their widest cell. */
export type Align = 'left' | 'right';

export function markdownTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  align: readonly Align[] = [],
): string {
  const widths = headers.map((header, column) =>
    Math.max(3, width(header), ...rows.map((row) => width(row[column] ?? ''))),
  );
  const cell = (text: string, column: number) => {
    const padding = ' '.repeat((widths[column] as number) - width(text));
    return align[column] === 'right' ? padding + text : text + padding;
  };
  const line = (cells: readonly string[]) =>
    `| ${cells.map((text, column) => cell(text, column)).join(' | ')} |`;
  const rule = widths.map((w, column) =>
    align[column] === 'right' ? `${'-'.repeat(w - 1)}:` : '-'.repeat(w),
  );
  return [line(headers), `| ${rule.join(' | ')} |`, ...rows.map(line)].join('\n');
}

/** Characters as a monospace display counts them (every character here is one column wide). */
function width(text: string): number {
  return [...text].length;
}

/** A number with thousands separators and a fixed number of decimals. */
export function n(value: number, digits = 0): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

export function dollars(value: number, digits = 2): string {
  return `$${n(value, digits)}`;
}

/** A ratio as the docs write it: ×1.23. */
export function times(value: number, digits = 2): string {
  return `×${n(value, digits)}`;
}

/** A paragraph wrapped at `width` columns, as the hand-written pages are. */
export function wrap(paragraph: string, width = 110): string {
  const lines: string[] = [];
  let line = '';
  for (const word of paragraph.split(/\s+/).filter((w) => w.length > 0)) {
    if (line.length > 0 && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line.length > 0 ? `${line} ${word}` : word;
  }
  if (line.length > 0) lines.push(line);
  return lines.join('\n');
}

/** A list item (`- …`) wrapped, its continuation lines indented under the text. */
export function wrapItem(item: string, width = 110): string {
  return wrap(item, width).replace(/\n/g, '\n  ');
}
