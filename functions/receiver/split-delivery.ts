/**
 * Splits a webhook body that is too large for one queue message into several valid envelopes (DESIGN §4):
 * cut only between entries, changes, and the items of a field's event arrays (`eventItemArrays`), keep
 * everything else of each entry, change and value (metadata, contacts, …) in every part, and keep the walk
 * order, so the events of all parts, read in order, are exactly the events of the body. Pure.
 *
 * Parts are assembled from slices of the original text rather than re-serialised: every item keeps Meta's
 * own bytes (escapes, number lexemes such as template ids above 2^53), and the hot path needs no second,
 * lossless parse. Sizes are computed from the slices' UTF-8 lengths as the parts are packed, greedily, in order.
 *
 * A `messages` change spread over several parts carries, in each, the item arrays it had with only that
 * part's items (possibly `[]`); `JSON.parse` semantics apply to repeated member names (the last one counts).
 */
import { eventItemArrays } from '../events/extract-events.ts';
import {
  arrayElements,
  isArrayAt,
  isObjectAt,
  lastMember,
  type MemberSpan,
  objectMembers,
  rootSpan,
  type Span,
} from './json-spans.ts';

export interface SplitDelivery {
  /** Envelopes of at most `maxBytes` UTF-8 bytes each, in order. */
  readonly parts: string[];
  /**
   * Pieces that cannot be cut further and alone exceed `maxBytes` (one event, or one change or entry that has
   * no event arrays to cut): each is a valid envelope holding just that piece, to be quarantined rather
   * than lost.
   */
  readonly oversized: string[];
}

/** `text` must be a body that `JSON.parse` accepted and that is a WhatsApp envelope (an `entry` array). */
export function splitDelivery(text: string, maxBytes: number): SplitDelivery {
  const layout = readEnvelope(text);
  const packer = new PartPacker(layout, maxBytes);
  for (const entry of layout.entries) {
    if (entry.kind === 'whole') {
      packer.add({ kind: 'entry', entry });
      continue;
    }
    for (const change of entry.changes) {
      if (change.kind === 'whole') {
        packer.add({ kind: 'change', entry, change });
        continue;
      }
      for (const item of change.items) packer.add({ kind: 'item', entry, change, item });
    }
  }
  return packer.finish();
}

const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');
const SEPARATOR_BYTES = 1; // ','
const BRACKETS_BYTES = 2; // '[' + ']'

/** A container with one array value cut out: `before` + `[` + elements + `]` + `after`. */
interface Template {
  readonly before: string;
  readonly after: string;
  /** UTF-8 bytes of the container with an empty array in the cut. */
  readonly emptyBytes: number;
}

interface EnvelopeLayout extends Template {
  readonly entries: EntryLayout[];
}

interface WholeLayout {
  readonly kind: 'whole';
  readonly text: string;
  readonly bytes: number;
}

type EntryLayout = WholeLayout | SplitEntry;
interface SplitEntry extends Template {
  readonly kind: 'split';
  readonly changes: ChangeLayout[];
}

type ChangeLayout = WholeLayout | SplitChange;
interface SplitChange {
  readonly kind: 'split';
  /** The change's text around its cut item arrays: `fixed[0] [..] fixed[1] [..] … fixed[n]`. */
  readonly fixed: readonly string[];
  /** UTF-8 bytes of the change with every cut array empty. */
  readonly emptyBytes: number;
  readonly items: ItemLayout[];
}

interface ItemLayout {
  /** Which cut array (index into the change's array slots) the item belongs to. */
  readonly slot: number;
  readonly text: string;
  readonly bytes: number;
}

function template(text: string, container: Span, cut: Span): Template {
  const before = text.slice(container.start, cut.start);
  const after = text.slice(cut.end, container.end);
  return { before, after, emptyBytes: utf8Bytes(before) + utf8Bytes(after) + BRACKETS_BYTES };
}

function whole(text: string, span: Span): WholeLayout {
  const slice = text.slice(span.start, span.end);
  return { kind: 'whole', text: slice, bytes: utf8Bytes(slice) };
}

function readEnvelope(text: string): EnvelopeLayout {
  const root = rootSpan(text);
  const entryMember = isObjectAt(text, root) ? lastMember(objectMembers(text, root), 'entry') : undefined;
  if (entryMember === undefined || !isArrayAt(text, entryMember)) {
    throw new TypeError('splitDelivery needs a WhatsApp envelope with an "entry" array');
  }
  return {
    ...template(text, root, entryMember),
    entries: arrayElements(text, entryMember).map((entry) => readEntry(text, entry)),
  };
}

function readEntry(text: string, span: Span): EntryLayout {
  if (!isObjectAt(text, span)) return whole(text, span);
  const changesMember = lastMember(objectMembers(text, span), 'changes');
  if (changesMember === undefined || !isArrayAt(text, changesMember)) return whole(text, span);
  const changes = arrayElements(text, changesMember).map((change) => readChange(text, change));
  if (changes.length === 0) return whole(text, span);
  return { kind: 'split', ...template(text, span, changesMember), changes };
}

function readChange(text: string, span: Span): ChangeLayout {
  if (!isObjectAt(text, span)) return whole(text, span);
  const members = objectMembers(text, span);
  const field = decodedString(text, lastMember(members, 'field'));
  const valueMember = lastMember(members, 'value');
  if (field === undefined || valueMember === undefined || !isObjectAt(text, valueMember)) {
    return whole(text, span);
  }
  const valueMembers = objectMembers(text, valueMember);
  const cuts: { arrayName: string; span: Span; elements: Span[] }[] = [];
  for (const arrayName of eventItemArrays(field)) {
    const arrayMember = lastMember(valueMembers, arrayName);
    if (arrayMember === undefined || !isArrayAt(text, arrayMember)) continue;
    cuts.push({ arrayName, span: arrayMember, elements: arrayElements(text, arrayMember) });
  }
  if (cuts.every((cut) => cut.elements.length === 0)) return whole(text, span);

  // Items are walked in the field's array order (that of the key recipes), slots follow the text order.
  const slotsInTextOrder = [...cuts].sort((a, b) => a.span.start - b.span.start);
  const fixed: string[] = [];
  let cursor = span.start;
  for (const cut of slotsInTextOrder) {
    fixed.push(text.slice(cursor, cut.span.start));
    cursor = cut.span.end;
  }
  fixed.push(text.slice(cursor, span.end));
  const items: ItemLayout[] = [];
  for (const cut of cuts) {
    const slot = slotsInTextOrder.indexOf(cut);
    for (const element of cut.elements) {
      const itemText = text.slice(element.start, element.end);
      items.push({ slot, text: itemText, bytes: utf8Bytes(itemText) });
    }
  }
  const emptyBytes = fixed.reduce((sum, piece) => sum + utf8Bytes(piece), 0) + cuts.length * BRACKETS_BYTES;
  return { kind: 'split', fixed, emptyBytes, items };
}

function decodedString(text: string, member: MemberSpan | undefined): string | undefined {
  if (member === undefined || text.charCodeAt(member.start) !== 0x22) return undefined;
  return JSON.parse(text.slice(member.start, member.end)) as string;
}

type Unit =
  | { readonly kind: 'entry'; readonly entry: WholeLayout }
  | { readonly kind: 'change'; readonly entry: SplitEntry; readonly change: WholeLayout }
  | {
      readonly kind: 'item';
      readonly entry: SplitEntry;
      readonly change: SplitChange;
      readonly item: ItemLayout;
    };

interface PartChange {
  readonly layout: ChangeLayout;
  /** For a split change: the items of each slot placed in this part. */
  readonly slots: string[][];
}

interface PartEntry {
  readonly layout: EntryLayout;
  readonly changes: PartChange[];
}

/** Packs units into parts in order, tracking each part's exact UTF-8 size as it grows. */
class PartPacker {
  readonly #envelope: EnvelopeLayout;
  readonly #maxBytes: number;
  readonly #parts: string[] = [];
  readonly #oversized: string[] = [];
  #entries: PartEntry[] = [];
  #bytes: number;

  constructor(envelope: EnvelopeLayout, maxBytes: number) {
    this.#envelope = envelope;
    this.#maxBytes = maxBytes;
    this.#bytes = envelope.emptyBytes;
  }

  add(unit: Unit): void {
    if (this.#bytes + this.#growth(unit) <= this.#maxBytes) {
      this.#place(unit);
      return;
    }
    if (this.#entries.length > 0) {
      this.#flush();
      if (this.#bytes + this.#growth(unit) <= this.#maxBytes) {
        this.#place(unit);
        return;
      }
    }
    // Too large even alone in a part: it becomes an envelope of its own, reported as oversized.
    this.#place(unit);
    this.#oversized.push(this.#render());
    this.#reset();
  }

  finish(): SplitDelivery {
    if (this.#entries.length > 0) this.#flush();
    return { parts: this.#parts, oversized: this.#oversized };
  }

  /** Bytes that placing `unit` would add to the current part. */
  #growth(unit: Unit): number {
    const lastEntry = this.#entries.at(-1);
    const entrySeparator = this.#entries.length > 0 ? SEPARATOR_BYTES : 0;
    if (unit.kind === 'entry') return entrySeparator + unit.entry.bytes;

    const unitBytes = unit.kind === 'change' ? unit.change.bytes : unit.change.emptyBytes + unit.item.bytes;
    if (lastEntry?.layout !== unit.entry) return entrySeparator + unit.entry.emptyBytes + unitBytes;

    const lastChange = lastEntry.changes.at(-1);
    if (unit.kind === 'item' && lastChange?.layout === unit.change) {
      const slotItems = lastChange.slots[unit.item.slot] ?? [];
      return (slotItems.length > 0 ? SEPARATOR_BYTES : 0) + unit.item.bytes;
    }
    return (lastEntry.changes.length > 0 ? SEPARATOR_BYTES : 0) + unitBytes;
  }

  #place(unit: Unit): void {
    this.#bytes += this.#growth(unit);
    if (unit.kind === 'entry') {
      this.#entries.push({ layout: unit.entry, changes: [] });
      return;
    }
    let lastEntry = this.#entries.at(-1);
    if (lastEntry?.layout !== unit.entry) {
      lastEntry = { layout: unit.entry, changes: [] };
      this.#entries.push(lastEntry);
    }
    if (unit.kind === 'change') {
      lastEntry.changes.push({ layout: unit.change, slots: [] });
      return;
    }
    let lastChange = lastEntry.changes.at(-1);
    if (lastChange?.layout !== unit.change) {
      lastChange = { layout: unit.change, slots: unit.change.fixed.slice(1).map(() => []) };
      lastEntry.changes.push(lastChange);
    }
    lastChange.slots[unit.item.slot]?.push(unit.item.text);
  }

  #flush(): void {
    this.#parts.push(this.#render());
    this.#reset();
  }

  #reset(): void {
    this.#entries = [];
    this.#bytes = this.#envelope.emptyBytes;
  }

  #render(): string {
    const { before, after } = this.#envelope;
    return `${before}[${this.#entries.map(renderEntry).join(',')}]${after}`;
  }
}

function renderEntry({ layout, changes }: PartEntry): string {
  if (layout.kind === 'whole') return layout.text;
  return `${layout.before}[${changes.map(renderChange).join(',')}]${layout.after}`;
}

function renderChange({ layout, slots }: PartChange): string {
  if (layout.kind === 'whole') return layout.text;
  let text = layout.fixed[0] ?? '';
  for (let slot = 0; slot < slots.length; slot++) {
    text += `[${slots[slot]?.join(',') ?? ''}]${layout.fixed[slot + 1] ?? ''}`;
  }
  return text;
}
