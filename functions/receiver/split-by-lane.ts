/**
 * Splits a delivery into its lanes (docs/design.md §8, contract/lanes.ts): the inbound `messages[]` items of
 * `messages` changes, one part per conversation (`<phone_number_id>:<customer>`, first seen first), for the message
 * lane; everything else (statuses, value-level errors, every other field) as the rest, for the status lane.
 * Pure, and linear in the body: every member is read once, and a part is built from what belongs to it only.
 *
 * What a conversation's part keeps (docs/receiver.md, "What a conversation's part keeps"), of the entries and
 * changes that carry its messages, and of the last member of each name (the one `JSON.parse` keeps):
 * - the envelope's `object`; each entry's `id` and `time`; each change's `field`;
 * - the change value's `messaging_product` and `metadata`, its `messages` cut down to the conversation's
 *   items, its other event arrays (`statuses`, `errors`) emptied, and its `contacts` cut down to the
 *   conversation's own: those whose `wa_id` is a phone number its messages came from or whose `user_id` is its
 *   customer's BSUID, and of the contacts with neither (nothing says whose they are) those that fit
 *   together in {@link ANONYMOUS_CONTACTS_BYTES}, in order;
 * - of the members the receiver does not know, at each of these levels, those that fit together in
 *   {@link OTHER_MEMBERS_BYTES} per object, in order.
 * Nothing else is copied, so a member repeated into every part cannot multiply the body; no event key reads
 * what is left out (a message's key is its `id`). The rest is the body with those items taken out of each
 * `messages` array; it keeps everything else. Both are built from slices of the original text, never
 * re-serialised, like split-delivery.ts.
 *
 * An item of `messages` that is not an object is no event and no one's message: it stays in the rest.
 */
import type { EventOrigin } from '../../contract/event-origin.ts';
import { conversationCustomer, conversationId, MESSAGE_LANE_FIELD } from '../../contract/lanes.ts';
import { eventItemArrays, extractEvents, extractEventsFromEnvelope } from '../events/extract-events.ts';
import {
  decodeString,
  isArrayAt,
  isObjectAt,
  isStringAt,
  nestingExceeds,
  type Span,
  skipValue,
  skipWhitespace,
  walkArray,
  walkObject,
} from '../events/json-spans.ts';
import { distinctOrigins } from '../events/origins.ts';
import { MAX_LOSSLESS_NESTING } from '../events/parse-json.ts';
import type { BodyRejection, EventExtraction } from '../events/types.ts';
import type { OutputBudget } from './output-budget.ts';

export interface ConversationPart {
  readonly conversationId: string;
  /** An envelope holding this conversation's messages of the delivery, in order, and nothing else. */
  readonly text: string;
  /** The keys of its events (its messages), in order. */
  readonly eventKeys: readonly string[];
  /** What subscribers are routed on (its number and account), as `StatusRest.origins`. */
  readonly origins: readonly EventOrigin[];
}

export interface StatusRest {
  /** The envelope without the inbound messages. */
  readonly text: string;
  /**
   * What subscribers are routed on: the distinct field, number and account of what a consumer would see in
   * it, in first-seen order: its events, its id-less messages and statuses, its changes of unknown fields,
   * its malformed parts (field `-` when above a change).
   */
  readonly origins: readonly EventOrigin[];
}

export interface LaneSplit {
  readonly messageParts: readonly ConversationPart[];
  /** `undefined` when the inbound messages were all there was: the rest holds nothing a consumer would see. */
  readonly rest: StatusRest | undefined;
  /**
   * A part or the rest could not be read back as an envelope (a parser limit the body did not reach whole):
   * the delivery is to be quarantined, never to lose what that part held. Never set for a body that
   * `readDelivery` accepted.
   */
  readonly unreadable?: { readonly reason: BodyRejection; readonly detail: string };
  /** The budget ran out before the split was done: the parts are incomplete, the body is amplifying. */
  readonly exceeded?: boolean;
}

/** Bytes of a change's contacts without `wa_id` and `user_id` that each conversation part of it keeps. */
export const ANONYMOUS_CONTACTS_BYTES = 256;

/** Bytes of members the receiver does not know that a conversation part keeps, per object. */
export const OTHER_MEMBERS_BYTES = 256;

/** The other event arrays of a `messages` change, emptied in a message part. */
const OTHER_EVENT_ARRAYS: ReadonlySet<string> = new Set(
  eventItemArrays(MESSAGE_LANE_FIELD).filter((name) => name !== MESSAGE_LANE_FIELD),
);

/** Members copied whole into a conversation part, per level. */
const ENVELOPE_COPIED: ReadonlySet<string> = new Set(['object']);
const ENTRY_COPIED: ReadonlySet<string> = new Set(['id', 'time']);
const CHANGE_COPIED: ReadonlySet<string> = new Set(['field']);
const VALUE_COPIED: ReadonlySet<string> = new Set(['messaging_product', 'metadata']);

const SENDER_MEMBERS = ['from', 'from_user_id'] as const;
const CONTACT_MEMBERS = ['wa_id', 'user_id'] as const;

/** A member of an object: its name, where the name's quote opens, and its value. */
interface Member {
  readonly name: string;
  readonly nameStart: number;
  readonly value: Span;
}

interface ArrayRead {
  readonly span: Span;
  readonly elements: Span[];
}

/** One conversation's messages in one change, and the ids its contacts may be found by. */
interface ConversationInChange {
  /** The customer's phone numbers (`from`) among its messages. */
  readonly waIds: Set<string>;
  /** The customer's business-scoped user ids (`from_user_id`, or their contact's `user_id`). */
  readonly userIds: Set<string>;
  readonly messages: Span[];
}

interface Contacts {
  /** Contacts with a string `wa_id`, by it. */
  readonly byWaId: ReadonlyMap<string, Span[]>;
  /** Contacts with a string `user_id` (a BSUID), by it. */
  readonly byUserId: ReadonlyMap<string, Span[]>;
  /** The `user_id` of the (last) contact of each `wa_id`. */
  readonly userIdOfWaId: ReadonlyMap<string, string>;
  /** Contacts with neither, those each part keeps: in order, each that still fits `ANONYMOUS_CONTACTS_BYTES`. */
  readonly anonymous: readonly Span[];
}

/** A `messages` change holding at least one inbound message (an object item of its `messages` array). */
interface MessagesChange {
  /** The change's members, the last of each name. */
  readonly members: readonly Member[];
  /** Its value's members, the last of each name. */
  readonly valueMembers: readonly Member[];
  readonly messagesArray: Span;
  /** Its inbound messages by conversation id, in first-seen order. */
  readonly conversations: ReadonlyMap<string, ConversationInChange>;
  /** Items of `messages` that are not objects: they stay in the rest. */
  readonly strays: readonly Span[];
  /** `undefined` when the last `contacts` is absent or not an array. */
  readonly contacts: Contacts | undefined;
}

interface EntryWithMessages {
  /** The entry's members, the last of each name. */
  readonly members: readonly Member[];
  readonly changes: readonly MessagesChange[];
}

interface EnvelopeRead {
  /** The envelope's members, the last of each name. */
  readonly members: readonly Member[];
  /** Only the entries holding inbound messages. */
  readonly entries: readonly EntryWithMessages[];
}

/**
 * `text` must be a body that `JSON.parse` accepted and that is a WhatsApp envelope. With a `budget`, every
 * part is charged to it and the split stops once it is spent (`exceeded`).
 */
export function splitByLane(text: string, budget?: OutputBudget): LaneSplit {
  const envelope = new LaneReader(text).readEnvelope();
  if (envelope === undefined || envelope.entries.length === 0) return withRest([], text, budget);
  // Where each conversation has messages, in walk order: a part is rendered from its own changes only.
  const occurrences = new Map<string, { entry: EntryWithMessages; changes: MessagesChange[] }[]>();
  for (const entry of envelope.entries) {
    for (const change of entry.changes) {
      for (const conversation of change.conversations.keys()) {
        let places = occurrences.get(conversation);
        if (places === undefined) {
          places = [];
          occurrences.set(conversation, places);
        }
        const last = places.at(-1);
        if (last?.entry === entry) last.changes.push(change);
        else places.push({ entry, changes: [change] });
      }
    }
  }
  // One part per conversation: too many of them is known before any is built.
  if (budget !== undefined && !budget.charge(0, occurrences.size)) {
    return { messageParts: [], rest: undefined, exceeded: true };
  }
  const renderer = new PartRenderer(text);
  const messageParts: ConversationPart[] = [];
  for (const [conversation, places] of occurrences) {
    const partText = renderer.envelope(envelope, conversation, places);
    if (budget !== undefined && !budget.charge(Buffer.byteLength(partText, 'utf8'), 0)) {
      return { messageParts, rest: undefined, exceeded: true };
    }
    const extraction = extractEvents(partText);
    if (!extraction.ok) {
      return { messageParts, rest: undefined, unreadable: unreadable(extraction) };
    }
    messageParts.push({
      conversationId: conversation,
      text: partText,
      eventKeys: extraction.events.map((event) => event.key),
      origins: distinctOrigins(extraction),
    });
  }
  const cuts: Replacement[] = envelope.entries.flatMap((entry) =>
    entry.changes.map((change) => ({
      span: change.messagesArray,
      text: `[${change.strays.map((stray) => sliceOf(text, stray)).join(',')}]`,
    })),
  );
  return withRest(messageParts, splice(text, cuts), budget);
}

function withRest(
  messageParts: ConversationPart[],
  text: string,
  budget: OutputBudget | undefined,
): LaneSplit {
  const extraction = readFields(text);
  // Told apart from a rest with nothing in it: what this one holds must reach an operator, not vanish.
  if (!extraction.ok) return { messageParts, rest: undefined, unreadable: unreadable(extraction) };
  // What a consumer would see of it: events, and the items and changes it counts, logs or quarantines.
  const origins = distinctOrigins(extraction);
  if (origins.length === 0) return { messageParts, rest: undefined };
  if (budget !== undefined && !budget.charge(Buffer.byteLength(text, 'utf8'))) {
    return { messageParts, rest: undefined, exceeded: true };
  }
  return { messageParts, rest: { text, origins } };
}

/**
 * The rest's events for their fields alone: no key is taken from it, so a native parse does, where a lossless
 * one costs about a second per MB when the body holds an id above 2^53. It refuses what the consumer's parser
 * (parse-json.ts) would: text that is not JSON, and JSON nested past its limit.
 */
function readFields(text: string): EventExtraction {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'invalid-json', detail: 'the rest is not valid JSON' };
  }
  if (nestingExceeds(text, MAX_LOSSLESS_NESTING)) {
    return {
      ok: false,
      reason: 'invalid-json',
      detail: `the rest nests deeper than ${MAX_LOSSLESS_NESTING} levels`,
    };
  }
  return extractEventsFromEnvelope(parsed);
}

function unreadable(extraction: { readonly reason: BodyRejection; readonly detail: string }) {
  return { reason: extraction.reason, detail: extraction.detail };
}

interface Replacement {
  readonly span: Span;
  readonly text: string;
}

/** `text` with each replacement's span (not overlapping, in text order) replaced. */
function splice(text: string, replacements: readonly Replacement[]): string {
  const parts: string[] = [];
  let cursor = 0;
  for (const { span, text: replacement } of replacements) {
    parts.push(text.slice(cursor, span.start), replacement);
    cursor = span.end;
  }
  parts.push(text.slice(cursor));
  return parts.join('');
}

const sliceOf = (text: string, span: Span) => text.slice(span.start, span.end);

/** The last member of each name (the one `JSON.parse` keeps), in text order. */
function lastOfEachName(members: readonly Member[]): Member[] {
  const last = new Map<string, Member>();
  for (const member of members) last.set(member.name, member);
  return members.filter((member) => last.get(member.name) === member);
}

class PartRenderer {
  readonly #text: string;

  constructor(text: string) {
    this.#text = text;
  }

  envelope(
    envelope: EnvelopeRead,
    conversation: string,
    places: readonly { entry: EntryWithMessages; changes: readonly MessagesChange[] }[],
  ): string {
    return this.#object(envelope.members, ENVELOPE_COPIED, (member) => {
      if (member.name !== 'entry') return undefined;
      const entries = places.map(({ entry, changes }) => this.#entry(entry, conversation, changes));
      return `${this.#nameOf(member)}[${entries.join(',')}]`;
    });
  }

  #entry(entry: EntryWithMessages, conversation: string, changes: readonly MessagesChange[]): string {
    return this.#object(entry.members, ENTRY_COPIED, (member) => {
      if (member.name !== 'changes') return undefined;
      return `${this.#nameOf(member)}[${changes.map((change) => this.#change(change, conversation)).join(',')}]`;
    });
  }

  #change(change: MessagesChange, conversation: string): string {
    return this.#object(change.members, CHANGE_COPIED, (member) =>
      member.name === 'value' ? `${this.#nameOf(member)}${this.#value(change, conversation)}` : undefined,
    );
  }

  #value(change: MessagesChange, conversation: string): string {
    const mine = change.conversations.get(conversation) as ConversationInChange;
    return this.#object(change.valueMembers, VALUE_COPIED, (member) => {
      if (member.name === MESSAGE_LANE_FIELD) return `${this.#nameOf(member)}${this.#array(mine.messages)}`;
      if (member.name === 'contacts') {
        // A `contacts` that is not an array names no one: left out.
        if (change.contacts === undefined) return '';
        return `${this.#nameOf(member)}${this.#array(ownContacts(change.contacts, mine))}`;
      }
      if (OTHER_EVENT_ARRAYS.has(member.name))
        return isArrayAt(this.#text, member.value.start) ? `${this.#nameOf(member)}[]` : '';
      return undefined;
    });
  }

  /**
   * `{…}` of the members: `special` renders the members it knows (`''` leaves one out, `undefined` means it is
   * not one of them), `copied` ones are copied whole, and of the others each that still fits
   * OTHER_MEMBERS_BYTES.
   */
  #object(
    members: readonly Member[],
    copied: ReadonlySet<string>,
    special: (member: Member) => string | undefined,
  ): string {
    const out: string[] = [];
    let otherBytes = 0;
    for (const member of members) {
      const rendered = special(member);
      if (rendered !== undefined) {
        if (rendered !== '') out.push(rendered);
        continue;
      }
      const whole = this.#text.slice(member.nameStart, member.value.end);
      if (!copied.has(member.name)) {
        const bytes = Buffer.byteLength(whole, 'utf8');
        if (otherBytes + bytes > OTHER_MEMBERS_BYTES) continue;
        otherBytes += bytes;
      }
      out.push(whole);
    }
    return `{${out.join(',')}}`;
  }

  /** The member's name, colon and the spacing around it, as in the body. */
  #nameOf(member: Member): string {
    return this.#text.slice(member.nameStart, member.value.start);
  }

  #array(spans: readonly Span[]): string {
    return `[${spans.map((span) => sliceOf(this.#text, span)).join(',')}]`;
  }
}

/** The conversation's contacts in the change, in the change's order. */
function ownContacts(contacts: Contacts, mine: ConversationInChange): Span[] {
  const own = new Set<Span>(contacts.anonymous);
  for (const waId of mine.waIds) for (const span of contacts.byWaId.get(waId) ?? []) own.add(span);
  for (const userId of mine.userIds) for (const span of contacts.byUserId.get(userId) ?? []) own.add(span);
  return [...own].sort((a, b) => a.start - b.start);
}

class LaneReader {
  readonly #text: string;

  constructor(text: string) {
    this.#text = text;
  }

  readEnvelope(): EnvelopeRead | undefined {
    const text = this.#text;
    const start = skipWhitespace(text, 0);
    if (!isObjectAt(text, start)) return undefined;
    const { last, arrays } = this.#members(start, (name, valueStart) =>
      name === 'entry' ? this.#readArray(valueStart) : undefined,
    );
    const entryMember = last.find((member) => member.name === 'entry');
    const entries = entryMember === undefined ? undefined : arrays.get(entryMember);
    if (entries === undefined) return undefined;
    const withMessages: EntryWithMessages[] = [];
    for (const element of entries.elements) {
      const entry = this.#readEntry(element);
      if (entry !== undefined) withMessages.push(entry);
    }
    return { members: last, entries: withMessages };
  }

  #readEntry(span: Span): EntryWithMessages | undefined {
    if (!isObjectAt(this.#text, span.start)) return undefined;
    const { last, arrays } = this.#members(span.start, (name, valueStart) =>
      name === 'changes' ? this.#readArray(valueStart) : undefined,
    );
    const changesMember = last.find((member) => member.name === 'changes');
    const changes = changesMember === undefined ? undefined : arrays.get(changesMember);
    if (changes === undefined) return undefined;
    const withMessages: MessagesChange[] = [];
    for (const element of changes.elements) {
      const change = this.#readChange(element);
      if (change !== undefined) withMessages.push(change);
    }
    return withMessages.length === 0 ? undefined : { members: last, changes: withMessages };
  }

  #readChange(span: Span): MessagesChange | undefined {
    const text = this.#text;
    if (!isObjectAt(text, span.start)) return undefined;
    const change = this.#members(span.start, () => undefined).last;
    // `field` may come after `value` (Meta writes it last): the value is read once the change is.
    const field = change.find((member) => member.name === 'field');
    const value = change.find((member) => member.name === 'value');
    if (
      field === undefined ||
      this.#stringAt(field.value) !== MESSAGE_LANE_FIELD ||
      value === undefined ||
      !isObjectAt(text, value.value.start)
    )
      return undefined;

    const { last: valueMembers, arrays } = this.#members(value.value.start, (name, valueStart) =>
      name === MESSAGE_LANE_FIELD || name === 'contacts' ? this.#readArray(valueStart) : undefined,
    );
    let phoneNumberId: string | undefined;
    let messages: ArrayRead | undefined;
    let contacts: ArrayRead | undefined;
    for (const member of valueMembers) {
      if (member.name === 'metadata') phoneNumberId = this.#memberString(member.value, 'phone_number_id');
      else if (member.name === MESSAGE_LANE_FIELD) messages = arrays.get(member);
      else if (member.name === 'contacts') contacts = arrays.get(member);
    }
    if (messages === undefined) return undefined;

    const contactsRead = contacts === undefined ? undefined : this.#contacts(contacts);
    const conversations = new Map<string, ConversationInChange>();
    const strays: Span[] = [];
    for (const element of messages.elements) {
      if (!isObjectAt(text, element.start)) {
        strays.push(element);
        continue;
      }
      const { from, from_user_id: fromUserId } = this.#memberStrings(element, SENDER_MEMBERS);
      const customer = conversationCustomer({
        fromUserId,
        from,
        userIdOfContact: (waId) => contactsRead?.userIdOfWaId.get(waId),
      });
      const id = conversationId(phoneNumberId, customer);
      let conversation = conversations.get(id);
      if (conversation === undefined) {
        conversation = { waIds: new Set(), userIds: new Set(), messages: [] };
        conversations.set(id, conversation);
      }
      if (from !== undefined) conversation.waIds.add(from);
      if (customer !== undefined && customer !== from) conversation.userIds.add(customer);
      conversation.messages.push(element);
    }
    if (conversations.size === 0) return undefined;
    return {
      members: change,
      valueMembers,
      messagesArray: messages.span,
      conversations,
      strays,
      contacts: contactsRead,
    };
  }

  #contacts({ elements }: ArrayRead): Contacts {
    const byWaId = new Map<string, Span[]>();
    const byUserId = new Map<string, Span[]>();
    const userIdOfWaId = new Map<string, string>();
    const anonymous: Span[] = [];
    let anonymousBytes = 0;
    // Appended in place: a list copied on each append made 40,000 contacts of one `wa_id` take 15 s.
    const add = (map: Map<string, Span[]>, id: string, contact: Span) => {
      const list = map.get(id);
      if (list === undefined) map.set(id, [contact]);
      else list.push(contact);
    };
    for (const contact of elements) {
      const { wa_id: waId, user_id: userId } = this.#memberStrings(contact, CONTACT_MEMBERS);
      if (waId !== undefined) add(byWaId, waId, contact);
      if (userId !== undefined) add(byUserId, userId, contact);
      if (waId !== undefined && userId !== undefined) userIdOfWaId.set(waId, userId);
      if (waId === undefined && userId === undefined) {
        const bytes = Buffer.byteLength(sliceOf(this.#text, contact), 'utf8');
        if (anonymousBytes + bytes > ANONYMOUS_CONTACTS_BYTES) continue;
        anonymousBytes += bytes;
        anonymous.push(contact);
      }
    }
    return { byWaId, byUserId, userIdOfWaId, anonymous };
  }

  /**
   * The members of the object at `start`, the last of each name in text order, and the arrays `read`
   * returned for the members it reads (in the same walk, so each value is read once).
   */
  #members(
    start: number,
    read: (name: string, valueStart: number) => ArrayRead | undefined,
  ): { last: Member[]; arrays: Map<Member, ArrayRead> } {
    const text = this.#text;
    const members: Member[] = [];
    const arrays = new Map<Member, ArrayRead>();
    walkObject(text, start, (name, valueStart, nameStart) => {
      const array = read(name, valueStart);
      const end = array?.span.end ?? skipValue(text, valueStart);
      const member = { name, nameStart, value: { start: valueStart, end } };
      members.push(member);
      if (array !== undefined) arrays.set(member, array);
      return end;
    });
    return { last: lastOfEachName(members), arrays };
  }

  /** The elements of the array at `start`, or `undefined` when the value there is not an array. */
  #readArray(start: number): ArrayRead | undefined {
    const text = this.#text;
    if (!isArrayAt(text, start)) return undefined;
    const elements: Span[] = [];
    const end = walkArray(text, start, (elementStart) => {
      const elementEnd = skipValue(text, elementStart);
      elements.push({ start: elementStart, end: elementEnd });
      return elementEnd;
    });
    return { span: { start, end }, elements };
  }

  /** The string value of the object's (last) member `name`, or `undefined` (absent, not a string, not an object). */
  #memberString(object: Span, name: string): string | undefined {
    return this.#memberStrings(object, [name])[name];
  }

  /** The string values of the object's (last) members of these names, in one walk. */
  #memberStrings<N extends string>(object: Span, names: readonly N[]): Partial<Record<N, string>> {
    const text = this.#text;
    const found: Partial<Record<N, string>> = {};
    if (!isObjectAt(text, object.start)) return found;
    walkObject(text, object.start, (member, valueStart) => {
      const valueEnd = skipValue(text, valueStart);
      if ((names as readonly string[]).includes(member)) {
        found[member as N] = this.#stringAt({ start: valueStart, end: valueEnd });
      }
      return valueEnd;
    });
    return found;
  }

  #stringAt({ start, end }: Span): string | undefined {
    return isStringAt(this.#text, start) ? decodeString(this.#text, start, end) : undefined;
  }
}
