/**
 * Splits a webhook body that is too large for one queue message into several valid envelopes (DESIGN §4):
 * cut only between entries, changes, and the items of a field's event arrays (`eventItemArrays`), keep
 * everything else of each entry, change and value (metadata, contacts, …) in every part, and keep the walk
 * order, so the events of all parts, read in order, are exactly the events of the body. Pure.
 *
 * Parts are made of slices of the original text, never re-serialised: every event keeps Meta's own bytes
 * (escapes, number lexemes such as template ids above 2^53) and the hot path needs no second, lossless
 * parse. Siblings that a part holds whole are copied as one contiguous slice, separators included, so a
 * part is a few large slices rather than a thousand small ones. Parts are packed greedily, in order, with
 * their exact UTF-8 size tracked as they grow.
 *
 * A `messages` change spread over several parts carries, in each, the event arrays it had with only that
 * part's items (possibly `[]`). Repeated member names follow `JSON.parse`: the last one counts.
 */
import { eventItemArrays } from '../events/extract-events.ts';
import {
  decodeString,
  isArrayAt,
  isObjectAt,
  isStringAt,
  type Span,
  skipValue,
  skipWhitespace,
  walkArray,
  walkObject,
} from './json-spans.ts';

export interface SplitDelivery {
  /** Envelopes of at most `maxBytes` UTF-8 bytes each, in order. */
  readonly parts: string[];
  /**
   * Pieces that cannot be cut further and alone exceed `maxBytes` (one event, or one change or entry without
   * event arrays to cut): each is a valid envelope holding just that piece, to be quarantined, not lost.
   */
  readonly oversized: string[];
}

/** `text` must be a body that `JSON.parse` accepted and that is a WhatsApp envelope (an `entry` array). */
export function splitDelivery(text: string, maxBytes: number): SplitDelivery {
  const reader = new EnvelopeReader(text);
  const envelope = reader.readEnvelope();
  const packer = new PartPacker(text, envelope, maxBytes);
  envelope.entries.forEach((entry, entryIndex) => {
    if (entry.kind === 'whole') {
      packer.add({ entryIndex });
      return;
    }
    entry.changes.forEach((change, changeIndex) => {
      if (change.kind === 'whole') {
        packer.add({ entryIndex, changeIndex });
        return;
      }
      for (const item of change.walk) packer.add({ entryIndex, changeIndex, item });
    });
  });
  return packer.finish();
}

const BRACKETS_BYTES = 2; // '[' + ']'

/** A value's span and UTF-8 size, plus the bytes of the separator (comma, whitespace) before it. */
interface Sibling extends Span {
  readonly bytes: number;
  /** Bytes between the previous sibling's end and this one's start; 0 for the first. */
  readonly gapBytes: number;
}

/** A container with one array value cut out: `before` + `[` + run of elements + `]` + `after`. */
interface Template {
  readonly before: string;
  readonly after: string;
  /** UTF-8 bytes of the container with an empty array in the cut. */
  readonly emptyBytes: number;
}

interface EnvelopeLayout extends Template {
  readonly entries: EntryLayout[];
}

type EntryLayout = (Sibling & { readonly kind: 'whole' }) | SplitEntry;
interface SplitEntry extends Sibling, Template {
  readonly kind: 'split';
  /** Its bytes equal the size the packer counts for it whole (no whitespace inside the cut brackets). */
  readonly copyable: boolean;
  readonly changes: ChangeLayout[];
}

type ChangeLayout = (Sibling & { readonly kind: 'whole' }) | SplitChange;
interface SplitChange extends Sibling {
  readonly kind: 'split';
  /** Its bytes equal the size the packer counts for it whole (no whitespace inside the cut brackets). */
  readonly copyable: boolean;
  /** The change's text around its cut arrays, in text order: `fixed[0] [..] fixed[1] [..] … fixed[n]`. */
  readonly fixed: readonly string[];
  /** UTF-8 bytes of the change with every cut array empty. */
  readonly emptyBytes: number;
  /** UTF-8 bytes the packer counts for the change with all its items: `bytes` less any whitespace just
   * inside the cut arrays' brackets, which parts do not keep. */
  readonly countedBytes: number;
  /** The cut arrays' elements, one list per slot (text order). */
  readonly slots: readonly Sibling[][];
  /** Every item in walk order (the field's array order, then index): the order of its events' keys. */
  readonly walk: readonly ItemRef[];
}

interface ItemRef {
  readonly slot: number;
  readonly index: number;
}

class EnvelopeReader {
  readonly #text: string;
  readonly #bytes: (start: number, end: number) => number;

  constructor(text: string) {
    this.#text = text;
    // Meta escapes non-ASCII characters, so bodies are usually ASCII: then a size is an offset difference.
    this.#bytes =
      Buffer.byteLength(text, 'utf8') === text.length
        ? (start, end) => end - start
        : (start, end) => Buffer.byteLength(text.slice(start, end), 'utf8');
  }

  readEnvelope(): EnvelopeLayout {
    const text = this.#text;
    const start = skipWhitespace(text, 0);
    if (!isObjectAt(text, start))
      throw new TypeError('splitDelivery needs a WhatsApp envelope (a JSON object)');
    let entries: { elements: EntryLayout[]; span: Span } | undefined;
    const end = walkObject(text, start, (name, valueStart) => {
      if (name !== 'entry' || !isArrayAt(text, valueStart)) return skipValue(text, valueStart);
      entries = this.#readArray(valueStart, (entryStart, gapBytes) => this.#readEntry(entryStart, gapBytes));
      return entries.span.end;
    });
    if (entries === undefined)
      throw new TypeError('splitDelivery needs a WhatsApp envelope with an "entry" array');
    return { ...this.#template({ start, end }, entries.span), entries: entries.elements };
  }

  /** Reads each element with `read`; the last member of a repeated name wins, as with `JSON.parse`. */
  #readArray<T extends Span>(start: number, read: (start: number, gapBytes: number) => T) {
    const elements: T[] = [];
    const end = walkArray(this.#text, start, (elementStart) => {
      const previous = elements.at(-1);
      const element = read(elementStart, previous === undefined ? 0 : elementStart - previous.end);
      elements.push(element);
      return element.end;
    });
    return { elements, span: { start, end } };
  }

  #template(container: Span, cut: Span): Template {
    return {
      before: this.#text.slice(container.start, cut.start),
      after: this.#text.slice(cut.end, container.end),
      emptyBytes:
        this.#bytes(container.start, cut.start) + this.#bytes(cut.end, container.end) + BRACKETS_BYTES,
    };
  }

  #whole(start: number, end: number, gapBytes: number): Sibling & { kind: 'whole' } {
    return { kind: 'whole', start, end, bytes: this.#bytes(start, end), gapBytes };
  }

  #readEntry(start: number, gapBytes: number): EntryLayout {
    const text = this.#text;
    if (!isObjectAt(text, start)) return this.#whole(start, skipValue(text, start), gapBytes);
    let changes: { elements: ChangeLayout[]; span: Span } | undefined;
    const end = walkObject(text, start, (name, valueStart) => {
      if (name !== 'changes') return skipValue(text, valueStart);
      if (!isArrayAt(text, valueStart)) {
        changes = undefined;
        return skipValue(text, valueStart);
      }
      changes = this.#readArray(valueStart, (changeStart, changeGap) =>
        this.#readChange(changeStart, changeGap),
      );
      return changes.span.end;
    });
    if (changes === undefined || changes.elements.length === 0) return this.#whole(start, end, gapBytes);
    const template = this.#template({ start, end }, changes.span);
    const bytes = this.#bytes(start, end);
    const counted = changes.elements.reduce(
      (sum, change) => sum + change.gapBytes + (change.kind === 'whole' ? change.bytes : change.countedBytes),
      template.emptyBytes,
    );
    return {
      kind: 'split',
      start,
      end,
      bytes,
      gapBytes,
      ...template,
      copyable: bytes === counted,
      changes: changes.elements,
    };
  }

  #readChange(start: number, gapBytes: number): ChangeLayout {
    const text = this.#text;
    if (!isObjectAt(text, start)) return this.#whole(start, skipValue(text, start), gapBytes);
    let field: string | undefined;
    // Every array of the value, by name: `field` may come after `value` (Meta writes it last), so which of
    // them hold events is known only once the whole change is read.
    let valueArrays: Map<string, { span: Span; elements: Sibling[] }> | undefined;
    const end = walkObject(text, start, (name, valueStart) => {
      if (name === 'field') {
        const valueEnd = skipValue(text, valueStart);
        field = isStringAt(text, valueStart) ? decodeString(text, valueStart, valueEnd) : undefined;
        return valueEnd;
      }
      if (name !== 'value') return skipValue(text, valueStart);
      if (!isObjectAt(text, valueStart)) {
        valueArrays = undefined;
        return skipValue(text, valueStart);
      }
      const arrays = new Map<string, { span: Span; elements: Sibling[] }>();
      valueArrays = arrays;
      return walkObject(text, valueStart, (member, memberStart) => {
        if (!isArrayAt(text, memberStart)) {
          arrays.delete(member);
          return skipValue(text, memberStart);
        }
        const array = this.#readArray(memberStart, (itemStart, itemGap) =>
          this.#whole(itemStart, skipValue(text, itemStart), itemGap),
        );
        arrays.set(member, array);
        return array.span.end;
      });
    });
    if (field === undefined || valueArrays === undefined) return this.#whole(start, end, gapBytes);

    const cuts: { span: Span; elements: Sibling[] }[] = [];
    for (const arrayName of eventItemArrays(field)) {
      const array = valueArrays.get(arrayName);
      if (array !== undefined) cuts.push(array);
    }
    if (cuts.every((cut) => cut.elements.length === 0)) return this.#whole(start, end, gapBytes);

    const inTextOrder = [...cuts].sort((a, b) => a.span.start - b.span.start);
    const fixed: string[] = [];
    let fixedBytes = 0;
    let cursor = start;
    for (const cut of inTextOrder) {
      fixed.push(text.slice(cursor, cut.span.start));
      fixedBytes += this.#bytes(cursor, cut.span.start);
      cursor = cut.span.end;
    }
    fixed.push(text.slice(cursor, end));
    fixedBytes += this.#bytes(cursor, end);
    const walk: ItemRef[] = [];
    let itemBytes = 0;
    for (const cut of cuts) {
      const slot = inTextOrder.indexOf(cut);
      cut.elements.forEach((element, index) => {
        walk.push({ slot, index });
        itemBytes += element.gapBytes + element.bytes;
      });
    }
    const bytes = this.#bytes(start, end);
    const emptyBytes = fixedBytes + cuts.length * BRACKETS_BYTES;
    return {
      kind: 'split',
      start,
      end,
      bytes,
      gapBytes,
      fixed,
      emptyBytes,
      countedBytes: emptyBytes + itemBytes,
      copyable: bytes === emptyBytes + itemBytes,
      slots: inTextOrder.map((cut) => cut.elements),
      walk,
    };
  }
}

/** One thing to place: a whole entry, a whole change, or one item of a split change. */
interface Unit {
  readonly entryIndex: number;
  readonly changeIndex?: number;
  readonly item?: ItemRef;
}

interface PartChange {
  readonly index: number;
  /** Per slot, the first and last item index placed in this part (items of a slot are consecutive). */
  readonly ranges: ([number, number] | undefined)[];
  placedItems: number;
}

interface PartEntry {
  readonly index: number;
  readonly changes: PartChange[];
}

/** Packs units into parts in order, tracking each part's exact UTF-8 size as it grows. */
class PartPacker {
  readonly #text: string;
  readonly #envelope: EnvelopeLayout;
  readonly #maxBytes: number;
  readonly #parts: string[] = [];
  readonly #oversized: string[] = [];
  #entries: PartEntry[] = [];
  #bytes: number;

  constructor(text: string, envelope: EnvelopeLayout, maxBytes: number) {
    this.#text = text;
    this.#envelope = envelope;
    this.#maxBytes = maxBytes;
    this.#bytes = envelope.emptyBytes;
  }

  add(unit: Unit): void {
    let growth = this.#growth(unit);
    if (this.#bytes + growth > this.#maxBytes && this.#entries.length > 0) {
      this.#flush(this.#parts);
      growth = this.#growth(unit);
    }
    this.#place(unit, growth);
    // Too large even alone in a part: it becomes an envelope of its own, reported as oversized.
    if (this.#bytes > this.#maxBytes) this.#flush(this.#oversized);
  }

  finish(): SplitDelivery {
    if (this.#entries.length > 0) this.#flush(this.#parts);
    return { parts: this.#parts, oversized: this.#oversized };
  }

  /** Bytes that placing `unit` would add to the current part. */
  #growth({ entryIndex, changeIndex, item }: Unit): number {
    const entry = this.#envelope.entries[entryIndex] as EntryLayout;
    const lastEntry = this.#entries.at(-1);
    // Siblings placed in one part are consecutive in the body, so the separator is the body's own.
    const entryGap = lastEntry === undefined ? 0 : entry.gapBytes;
    if (changeIndex === undefined || entry.kind === 'whole') return entryGap + entry.bytes;

    const change = entry.changes[changeIndex] as ChangeLayout;
    const unitBytes =
      item === undefined || change.kind === 'whole'
        ? change.bytes
        : change.emptyBytes + itemOf(change, item).bytes;
    if (lastEntry?.index !== entryIndex) return entryGap + entry.emptyBytes + unitBytes;

    const lastChange = lastEntry.changes.at(-1);
    const changeGap = lastChange === undefined ? 0 : change.gapBytes;
    if (item === undefined || change.kind === 'whole' || lastChange?.index !== changeIndex) {
      return changeGap + unitBytes;
    }
    const placed = lastChange.ranges[item.slot] !== undefined;
    const element = itemOf(change, item);
    return (placed ? element.gapBytes : 0) + element.bytes;
  }

  #place({ entryIndex, changeIndex, item }: Unit, growth: number): void {
    this.#bytes += growth;
    let lastEntry = this.#entries.at(-1);
    if (lastEntry?.index !== entryIndex) {
      lastEntry = { index: entryIndex, changes: [] };
      this.#entries.push(lastEntry);
    }
    if (changeIndex === undefined) return;
    let lastChange = lastEntry.changes.at(-1);
    if (lastChange?.index !== changeIndex) {
      const entry = this.#envelope.entries[entryIndex] as SplitEntry;
      const change = entry.changes[changeIndex] as ChangeLayout;
      const slots = change.kind === 'split' ? change.slots.length : 0;
      lastChange = {
        index: changeIndex,
        ranges: Array.from({ length: slots }, () => undefined),
        placedItems: 0,
      };
      lastEntry.changes.push(lastChange);
    }
    if (item === undefined) return;
    const range = lastChange.ranges[item.slot];
    lastChange.ranges[item.slot] = range === undefined ? [item.index, item.index] : [range[0], item.index];
    lastChange.placedItems++;
  }

  #flush(into: string[]): void {
    const { before, after, entries } = this.#envelope;
    into.push(
      `${before}[${this.#renderRun(
        entries,
        this.#entries,
        (e) => this.#entryComplete(e),
        (e) => this.#renderEntry(e),
      )}]${after}`,
    );
    this.#entries = [];
    this.#bytes = this.#envelope.emptyBytes;
  }

  /** Whether the part holds the whole entry and may copy it from the body as it is. */
  #entryComplete(partEntry: PartEntry): boolean {
    const entry = this.#envelope.entries[partEntry.index] as EntryLayout;
    if (entry.kind === 'whole') return true;
    return (
      entry.copyable &&
      partEntry.changes.length === entry.changes.length &&
      partEntry.changes.every((partChange) => this.#changeComplete(entry, partChange))
    );
  }

  /** Whether the part holds the whole change and may copy it from the body as it is. */
  #changeComplete(entry: SplitEntry, partChange: PartChange): boolean {
    const change = entry.changes[partChange.index] as ChangeLayout;
    return change.kind === 'whole' || (change.copyable && partChange.placedItems === change.walk.length);
  }

  #renderEntry(partEntry: PartEntry): string {
    const entry = this.#envelope.entries[partEntry.index] as SplitEntry;
    const changes = this.#renderRun(
      entry.changes,
      partEntry.changes,
      (partChange) => this.#changeComplete(entry, partChange),
      (partChange) => this.#renderChange(entry.changes[partChange.index] as SplitChange, partChange),
    );
    return `${entry.before}[${changes}]${entry.after}`;
  }

  #renderChange(change: SplitChange, partChange: PartChange): string {
    let text = change.fixed[0] ?? '';
    change.slots.forEach((elements, slot) => {
      const range = partChange.ranges[slot];
      const first = range === undefined ? undefined : elements[range[0]];
      const last = range === undefined ? undefined : elements[range[1]];
      const items = first === undefined || last === undefined ? '' : this.#text.slice(first.start, last.end);
      text += `[${items}]${change.fixed[slot + 1] ?? ''}`;
    });
    return text;
  }

  /**
   * Renders consecutive siblings placed in this part: those held whole are copied from the body as one
   * slice (separators included), the others (at most the first and the last) are rendered partially.
   */
  #renderRun<P extends { index: number }>(
    siblings: readonly Sibling[],
    placed: readonly P[],
    isComplete: (part: P) => boolean,
    renderPartial: (part: P) => string,
  ): string {
    const text = this.#text;
    let out = '';
    let runStart: number | undefined;
    let previous: Sibling | undefined;
    for (const part of placed) {
      const sibling = siblings[part.index] as Sibling;
      if (isComplete(part)) {
        runStart ??= previous === undefined ? sibling.start : previous.end;
      } else {
        if (runStart !== undefined && previous !== undefined) out += text.slice(runStart, previous.end);
        runStart = undefined;
        if (previous !== undefined) out += text.slice(previous.end, sibling.start);
        out += renderPartial(part);
      }
      previous = sibling;
    }
    if (runStart !== undefined && previous !== undefined) out += text.slice(runStart, previous.end);
    return out;
  }
}

function itemOf(change: SplitChange, item: ItemRef): Sibling {
  return change.slots[item.slot]?.[item.index] as Sibling;
}
