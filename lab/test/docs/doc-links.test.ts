/**
 * The pages under docs/ link to one another by file and heading (`design.md#7-subscribers`): each such link must
 * land on a page and a heading that exist, so that renaming a heading cannot silently break the cross-references.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const docs = new URL('../../../docs/', import.meta.url);
const pages = readdirSync(docs).filter((name) => name.endsWith('.md'));
const text = (name: string) => readFileSync(new URL(name, docs), 'utf8');

/** GitHub's anchor for a heading: lowercase, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

const anchors = (name: string) =>
  new Set([...text(name).matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1] as string)));

describe('links between docs pages', () => {
  it.each(pages)('%s links only to pages and headings that exist', (page) => {
    const links = [...text(page).matchAll(/\]\(([\w.-]+\.md)?(?:#([^)\s]+))?\)/g)].filter(
      (match) => match[1] !== undefined || match[2] !== undefined,
    );
    for (const [link, target = page, anchor] of links) {
      expect(pages, link).toContain(target);
      if (anchor !== undefined) expect(anchors(target), link).toContain(anchor);
    }
  });
});
