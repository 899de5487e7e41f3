/**
 * Splits a webhook body that is too large for one queue message into several valid envelopes (docs/design.md §4):
 * cut only between entries, changes, and the items of a field's event arrays (`eventItemArrays`), keep
 * everything else of each entry, change and value (metadata, contacts, …) in every part, and keep the walk
 * order, so the events of all parts, read in order, are exactly the events of the body. Pure.
 *
 * Packing is greedy and in order, and keeps things whole where it can: an entry goes whole into the current
 * part, or else whole into a fresh one; only an entry larger than a part is opened and its changes packed
 * the same way, and only a change larger than a part is cut between its items. A piece that cannot be cut
 * and is still too large (one event, or a change or entry without event arrays) is returned as `oversized`.
 *
 * Parts are made of slices of the original text, never re-serialised: every event keeps Meta's own bytes
 * (escapes, number lexemes such as template ids above 2^53) and the hot path needs no second, lossless
 * parse. Siblings held whole are copied as one contiguous slice, separators included, so a part is a few
 * large slices; its exact UTF-8 size is tracked as it grows.
 *
 * A `messages` change spread over several parts carries, in each, the event arrays it had with only that
 * part's items (possibly `[]`). Repeated member names follow `JSON.parse`: the last one counts.
 */
import { eventItemArrays, KNOWN_FIELDS } from '../events/extract-events.ts';
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
} from '../events/json-spans.ts';
import type { OutputBudget } from './output-budget.ts';

export interface SplitDelivery {
  /** Envelopes of at most `maxBytes` UTF-8 bytes each, in order. */
  readonly parts: string[];
  /**
   * Pieces that cannot be cut further and alone exceed `maxBytes` (one event, or one change or entry without
   * event arrays to cut): each is a valid envelope holding just that piece, to be quarantined, not lost.
   */
  readonly oversized: string[];
  /**
   * The budget ran out before the split was done (the context repeated in every part outweighs what is cut):
   * `parts` and `oversized` are incomplete.
   */
  readonly exceeded?: boolean;
}

/**
 * `text` must be a body that `JSON.parse` accepted and that is a WhatsApp envelope (an `entry` array). With a
 * `budget`, every part and oversized piece is charged to it as it is made, and the split stops once it is
 * spent: the work is bounded by the budget, whatever the body repeats in each part.
 */
export function splitDelivery(text: string, maxBytes: number, budget?: OutputBudget): SplitDelivery {
  const reader = new EnvelopeReader(text);
  const envelope = reader.readEnvelope();
  const packer = new PartPacker(text, envelope, maxBytes, budget);
  for (let entryIndex = 0; entryIndex < envelope.entries.length && !packer.exceeded; entryIndex++) {
    if (packer.placeWhole({ entryIndex })) continue;
    const entry = reader.openEntry(envelope.entries[entryIndex] as Sibling);
    if (entry === undefined) {
      packer.placeOversized({ entryIndex });
      continue;
    }
    packer.opened.set(entryIndex, entry);
    for (let changeIndex = 0; changeIndex < entry.changes.length && !packer.exceeded; changeIndex++) {
      if (packer.placeWhole({ entryIndex, changeIndex })) continue;
      const change = reader.openChange(entry.changes[changeIndex] as Sibling);
      if (change === undefined) {
        packer.placeOversized({ entryIndex, changeIndex });
        continue;
      }
      entry.opened.set(changeIndex, change);
      for (const item of change.walk) {
        if (packer.exceeded) break;
        if (!packer.placeWhole({ entryIndex, changeIndex, item }))
          packer.placeOversized({ entryIndex, changeIndex, item });
      }
    }
  }
  return packer.finish();
}

const BRACKETS_BYTES = 2; // '[' + ']'

/** Names of arrays that hold events in some field: only those are worth reading item by item. */
const EVENT_ARRAY_NAMES: ReadonlySet<string> = new Set(
  KNOWN_FIELDS.flatMap((field) => eventItemArrays(field)),
);

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
  readonly entries: Sibling[];
}

/** An entry larger than a part, opened to place its changes one by one. */
interface OpenedEntry extends Template {
  readonly changes: Sibling[];
  /** Its changes that had to be opened in turn, by index. */
  readonly opened: Map<number, OpenedChange>;
}

/** A change larger than a part, opened to place its event items one by one. */
interface OpenedChange {
  /** The change's text around its cut arrays, in text order: `fixed[0] [..] fixed[1] [..] … fixed[n]`. */
  readonly fixed: readonly string[];
  /** UTF-8 bytes of the change with every cut array empty. */
  readonly emptyBytes: number;
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
    let entries: { elements: Sibling[]; span: Span } | undefined;
    const end = walkObject(text, start, (name, valueStart) => {
      if (name !== 'entry' || !isArrayAt(text, valueStart)) return skipValue(text, valueStart);
      entries = this.#readElements(valueStart);
      return entries.span.end;
    });
    if (entries === undefined)
      throw new TypeError('splitDelivery needs a WhatsApp envelope with an "entry" array');
    return { ...this.#template({ start, end }, entries.span), entries: entries.elements };
  }

  /** The entry's changes, or `undefined` when it has none to place separately. */
  openEntry(entry: Sibling): OpenedEntry | undefined {
    const text = this.#text;
    if (!isObjectAt(text, entry.start)) return undefined;
    let changes: { elements: Sibling[]; span: Span } | undefined;
    walkObject(text, entry.start, (name, valueStart) => {
      if (name !== 'changes') return skipValue(text, valueStart);
      changes = isArrayAt(text, valueStart) ? this.#readElements(valueStart) : undefined;
      return changes?.span.end ?? skipValue(text, valueStart);
    });
    if (changes === undefined || changes.elements.length === 0) return undefined;
    return { ...this.#template(entry, changes.span), changes: changes.elements, opened: new Map() };
  }

  /** The change's event items, or `undefined` when it has none (an unknown field, a per-change event, …). */
  openChange(change: Sibling): OpenedChange | undefined {
    const text = this.#text;
    if (!isObjectAt(text, change.start)) return undefined;
    let field: string | undefined;
    // Every event-capable array of the value, by name: `field` may come after `value` (Meta writes it
    // last), so which of them hold events is known only once the whole change is read.
    let valueArrays: Map<string, { span: Span; elements: Sibling[] }> | undefined;
    walkObject(text, change.start, (name, valueStart) => {
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
        if (!EVENT_ARRAY_NAMES.has(member) || !isArrayAt(text, memberStart)) {
          arrays.delete(member);
          return skipValue(text, memberStart);
        }
        const array = this.#readElements(memberStart);
        arrays.set(member, array);
        return array.span.end;
      });
    });
    if (field === undefined || valueArrays === undefined) return undefined;

    const cuts: { span: Span; elements: Sibling[] }[] = [];
    for (const arrayName of eventItemArrays(field)) {
      const array = valueArrays.get(arrayName);
      if (array !== undefined) cuts.push(array);
    }
    if (cuts.every((cut) => cut.elements.length === 0)) return undefined;

    const inTextOrder = [...cuts].sort((a, b) => a.span.start - b.span.start);
    const fixed: string[] = [];
    let emptyBytes = cuts.length * BRACKETS_BYTES;
    let cursor = change.start;
    for (const cut of inTextOrder) {
      fixed.push(text.slice(cursor, cut.span.start));
      emptyBytes += this.#bytes(cursor, cut.span.start);
      cursor = cut.span.end;
    }
    fixed.push(text.slice(cursor, change.end));
    emptyBytes += this.#bytes(cursor, change.end);
    const walk: ItemRef[] = [];
    for (const cut of cuts) {
      const slot = inTextOrder.indexOf(cut);
      for (let index = 0; index < cut.elements.length; index++) walk.push({ slot, index });
    }
    return { fixed, emptyBytes, slots: inTextOrder.map((cut) => cut.elements), walk };
  }

  /** The elements of the array at `start`, as spans with their sizes and separators. */
  #readElements(start: number): { elements: Sibling[]; span: Span } {
    const text = this.#text;
    const elements: Sibling[] = [];
    let previousEnd = -1;
    const end = walkArray(text, start, (elementStart) => {
      const elementEnd = skipValue(text, elementStart);
      elements.push({
        start: elementStart,
        end: elementEnd,
        bytes: this.#bytes(elementStart, elementEnd),
        // Separators are commas and JSON whitespace: ASCII, one byte per character.
        gapBytes: previousEnd < 0 ? 0 : elementStart - previousEnd,
      });
      previousEnd = elementEnd;
      return elementEnd;
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
}

/** One thing to place: a whole entry, a whole change of an opened entry, or an item of an opened change. */
interface Unit {
  readonly entryIndex: number;
  readonly changeIndex?: number;
  readonly item?: ItemRef;
}

interface PartChange {
  readonly index: number;
  /** For a change placed item by item: per slot, the first and last item index in this part. */
  readonly ranges?: ([number, number] | undefined)[];
}

interface PartEntry {
  readonly index: number;
  /** For an entry placed change by change: the changes in this part; `undefined` when placed whole. */
  readonly changes?: PartChange[];
}

/** Packs units into parts in order, tracking each part's exact UTF-8 size as it grows. */
class PartPacker {
  /** Entries that had to be opened, by index. */
  readonly opened = new Map<number, OpenedEntry>();
  readonly #text: string;
  readonly #envelope: EnvelopeLayout;
  readonly #maxBytes: number;
  readonly #parts: string[] = [];
  readonly #oversized: string[] = [];
  readonly #budget: OutputBudget | undefined;
  #entries: PartEntry[] = [];
  #bytes: number;

  constructor(text: string, envelope: EnvelopeLayout, maxBytes: number, budget: OutputBudget | undefined) {
    this.#text = text;
    this.#envelope = envelope;
    this.#maxBytes = maxBytes;
    this.#budget = budget;
    this.#bytes = envelope.emptyBytes;
  }

  /** The budget is spent: stop placing. */
  get exceeded(): boolean {
    return this.#budget?.exceeded === true;
  }

  /** Places `unit` whole in the current part, or else in a fresh one; `false` when it fits in neither. */
  placeWhole(unit: Unit): boolean {
    if (this.#entries.length > 0 && this.#bytes + this.#growth(unit) > this.#maxBytes) {
      const inFreshPart = this.#envelope.emptyBytes + this.#growth(unit, true);
      if (inFreshPart > this.#maxBytes) return false;
      this.#flush(this.#parts);
    }
    const growth = this.#growth(unit);
    if (this.#bytes + growth > this.#maxBytes) return false;
    this.#place(unit, growth);
    return true;
  }

  /** Emits `unit` as an envelope of its own, after closing the current part to keep the order. */
  placeOversized(unit: Unit): void {
    if (this.#entries.length > 0) this.#flush(this.#parts);
    this.#place(unit, this.#growth(unit));
    this.#flush(this.#oversized);
  }

  finish(): SplitDelivery {
    if (this.#entries.length > 0 && !this.exceeded) this.#flush(this.#parts);
    return this.exceeded
      ? { parts: this.#parts, oversized: this.#oversized, exceeded: true }
      : { parts: this.#parts, oversized: this.#oversized };
  }

  /** Bytes that placing `unit` would add to the current part (or to an empty one). */
  #growth({ entryIndex, changeIndex, item }: Unit, inEmptyPart = false): number {
    const entrySpan = this.#envelope.entries[entryIndex] as Sibling;
    const lastEntry = inEmptyPart ? undefined : this.#entries.at(-1);
    // Siblings placed in one part are consecutive in the body, so the separator is the body's own.
    const entryGap = lastEntry === undefined ? 0 : entrySpan.gapBytes;
    if (changeIndex === undefined) return entryGap + entrySpan.bytes;

    const entry = this.opened.get(entryIndex) as OpenedEntry;
    const changeSpan = entry.changes[changeIndex] as Sibling;
    const change = item === undefined ? undefined : (entry.opened.get(changeIndex) as OpenedChange);
    const unitBytes =
      change === undefined || item === undefined
        ? changeSpan.bytes
        : change.emptyBytes + itemOf(change, item).bytes;
    if (lastEntry?.index !== entryIndex) return entryGap + entry.emptyBytes + unitBytes;

    const lastChange = lastEntry.changes?.at(-1);
    const changeGap = lastChange === undefined ? 0 : changeSpan.gapBytes;
    if (change === undefined || item === undefined || lastChange?.index !== changeIndex)
      return changeGap + unitBytes;
    const element = itemOf(change, item);
    return (lastChange.ranges?.[item.slot] !== undefined ? element.gapBytes : 0) + element.bytes;
  }

  #place({ entryIndex, changeIndex, item }: Unit, growth: number): void {
    this.#bytes += growth;
    if (changeIndex === undefined) {
      this.#entries.push({ index: entryIndex });
      return;
    }
    let lastEntry = this.#entries.at(-1);
    if (lastEntry?.index !== entryIndex || lastEntry.changes === undefined) {
      lastEntry = { index: entryIndex, changes: [] };
      this.#entries.push(lastEntry);
    }
    const changes = lastEntry.changes as PartChange[];
    if (item === undefined) {
      changes.push({ index: changeIndex });
      return;
    }
    let lastChange = changes.at(-1);
    if (lastChange?.index !== changeIndex || lastChange.ranges === undefined) {
      const change = this.opened.get(entryIndex)?.opened.get(changeIndex) as OpenedChange;
      lastChange = { index: changeIndex, ranges: change.slots.map(() => undefined) };
      changes.push(lastChange);
    }
    const ranges = lastChange.ranges as ([number, number] | undefined)[];
    const range = ranges[item.slot];
    ranges[item.slot] = range === undefined ? [item.index, item.index] : [range[0], item.index];
  }

  #flush(into: string[]): void {
    // Charged before it is rendered, at its tracked size: once the budget is spent, nothing more is rendered.
    if (this.#budget !== undefined && !this.#budget.charge(this.#bytes)) {
      this.#entries = [];
      this.#bytes = this.#envelope.emptyBytes;
      return;
    }
    const { before, after, entries } = this.#envelope;
    const run = this.#renderRun(
      entries,
      this.#entries,
      (entry) => entry.changes === undefined,
      (entry) => this.#renderOpenedEntry(entry),
    );
    into.push(`${before}[${run}]${after}`);
    this.#entries = [];
    this.#bytes = this.#envelope.emptyBytes;
  }

  #renderOpenedEntry(partEntry: PartEntry): string {
    const entry = this.opened.get(partEntry.index) as OpenedEntry;
    const run = this.#renderRun(
      entry.changes,
      partEntry.changes ?? [],
      (change) => change.ranges === undefined,
      (change) => this.#renderOpenedChange(entry.opened.get(change.index) as OpenedChange, change),
    );
    return `${entry.before}[${run}]${entry.after}`;
  }

  #renderOpenedChange(change: OpenedChange, partChange: PartChange): string {
    let text = change.fixed[0] ?? '';
    change.slots.forEach((elements, slot) => {
      const range = partChange.ranges?.[slot];
      const first = range === undefined ? undefined : elements[range[0]];
      const last = range === undefined ? undefined : elements[range[1]];
      const items = first === undefined || last === undefined ? '' : this.#text.slice(first.start, last.end);
      text += `[${items}]${change.fixed[slot + 1] ?? ''}`;
    });
    return text;
  }

  /**
   * Renders consecutive siblings placed in this part: those placed whole are copied from the body as one
   * slice (separators included); opened ones (at most the first and the last) are rendered from their parts.
   */
  #renderRun<P extends { index: number }>(
    siblings: readonly Sibling[],
    placed: readonly P[],
    isWhole: (part: P) => boolean,
    renderOpened: (part: P) => string,
  ): string {
    const text = this.#text;
    let out = '';
    let runStart: number | undefined;
    let previous: Sibling | undefined;
    for (const part of placed) {
      const sibling = siblings[part.index] as Sibling;
      if (isWhole(part)) {
        runStart ??= previous === undefined ? sibling.start : previous.end;
      } else {
        if (runStart !== undefined && previous !== undefined) out += text.slice(runStart, previous.end);
        runStart = undefined;
        if (previous !== undefined) out += text.slice(previous.end, sibling.start);
        out += renderOpened(part);
      }
      previous = sibling;
    }
    if (runStart !== undefined && previous !== undefined) out += text.slice(runStart, previous.end);
    return out;
  }
}

function itemOf(change: OpenedChange, item: ItemRef): Sibling {
  return change.slots[item.slot]?.[item.index] as Sibling;
}
