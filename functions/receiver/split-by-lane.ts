/**
 * Splits a delivery into its lanes (docs/design.md §8, contract/lanes.ts): the inbound `messages[]` items of
 * `messages` changes, one part per conversation (`<phone_number_id>:<customer>`, first seen first), for the message
 * lane; everything else (statuses, value-level errors, every other field) as the rest, for the status lane.
 * Pure.
 *
 * A conversation's part is the envelope holding only the entries and changes that carry its messages, each
 * change keeping its members (metadata, `messaging_product`, …) with its `messages` array cut down to the
 * conversation's items, its other event arrays (`statuses`, `errors`) emptied, and its `contacts` reduced to
 * the conversation's contacts, found by `wa_id` or `user_id` (a contact with neither is kept: nothing says
 * whose it is). The rest is the
 * body with those items taken out of each `messages` array. Both are built from slices of the original text,
 * never re-serialised, like split-delivery.ts; repeated member names follow `JSON.parse` (the last one counts).
 *
 * An item of `messages` that is not an object is no event and no one's message: it stays in the rest.
 */
import { conversationCustomer, conversationId, MESSAGE_LANE_FIELD } from '../../contract/lanes.ts';
import { eventItemArrays, extractEvents } from '../events/extract-events.ts';
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

export interface ConversationPart {
  readonly conversationId: string;
  /** An envelope holding this conversation's messages of the delivery, in order, and nothing else. */
  readonly text: string;
  /** The keys of its events (its messages), in order. */
  readonly eventKeys: readonly string[];
}

export interface StatusRest {
  /** The envelope without the inbound messages. */
  readonly text: string;
  /** The distinct fields of its events, in first-seen order (what subscribers are routed on). */
  readonly eventFields: readonly string[];
}

export interface LaneSplit {
  readonly messageParts: readonly ConversationPart[];
  /** `undefined` when nothing but the inbound messages held an event. */
  readonly rest: StatusRest | undefined;
}

/** The other event arrays of a `messages` change, emptied in a message part. */
const OTHER_EVENT_ARRAYS: ReadonlySet<string> = new Set(
  eventItemArrays(MESSAGE_LANE_FIELD).filter((name) => name !== MESSAGE_LANE_FIELD),
);

const SENDER_MEMBERS = ['from', 'from_user_id'] as const;
const CONTACT_MEMBERS = ['wa_id', 'user_id'] as const;

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
  readonly array: Span;
  /** Contacts with a string `wa_id`, by it. */
  readonly byWaId: ReadonlyMap<string, Span[]>;
  /** Contacts with a string `user_id` (a BSUID), by it. */
  readonly byUserId: ReadonlyMap<string, Span[]>;
  /** The `user_id` of the (last) contact of each `wa_id`. */
  readonly userIdOfWaId: ReadonlyMap<string, string>;
  /** Contacts with neither: kept in every part, nothing says whose they are. */
  readonly anonymous: readonly Span[];
}

/** A `messages` change holding at least one inbound message (an object item of its `messages` array). */
interface MessagesChange {
  readonly span: Span;
  readonly messagesArray: Span;
  /** Its inbound messages by conversation id, in first-seen order. */
  readonly conversations: ReadonlyMap<string, ConversationInChange>;
  /** Items of `messages` that are not objects: they stay in the rest. */
  readonly strays: readonly Span[];
  readonly contacts: Contacts | undefined;
  /** The change's other event arrays, emptied in a message part. */
  readonly others: readonly Span[];
}

interface EntryWithMessages {
  readonly span: Span;
  readonly changesArray: Span;
  readonly changes: readonly MessagesChange[];
}

/** `text` must be a body that `JSON.parse` accepted and that is a WhatsApp envelope. */
export function splitByLane(text: string): LaneSplit {
  const reader = new LaneReader(text);
  const envelope = reader.readEnvelope();
  if (envelope === undefined || envelope.entries.length === 0) {
    return { messageParts: [], rest: restOf(text) };
  }
  // Where each conversation has messages, in walk order: a part is rendered from its own changes only.
  const occurrences = new Map<string, { entry: EntryWithMessages; changes: MessagesChange[] }[]>();
  for (const entry of envelope.entries) {
    for (const change of entry.changes) {
      for (const conversation of change.conversations.keys()) {
        const places = occurrences.get(conversation) ?? [];
        occurrences.set(conversation, places);
        const last = places.at(-1);
        if (last?.entry === entry) last.changes.push(change);
        else places.push({ entry, changes: [change] });
      }
    }
  }
  const messageParts = [...occurrences].map(([conversation, places]) => {
    const partText = renderConversation(text, envelope, conversation, places);
    return { conversationId: conversation, text: partText, eventKeys: keysOf(partText) };
  });
  const cuts: Replacement[] = envelope.entries.flatMap((entry) =>
    entry.changes.map((change) => ({
      span: change.messagesArray,
      text: `[${change.strays.map((stray) => text.slice(stray.start, stray.end)).join(',')}]`,
    })),
  );
  return { messageParts, rest: restOf(splice(text, { start: 0, end: text.length }, cuts)) };
}

function restOf(text: string): StatusRest | undefined {
  const extraction = extractEvents(text);
  if (!extraction.ok) return undefined;
  // A status without an id is no event, but its subscribers' consumers must see it to quarantine it.
  const fields = [...extraction.events, ...extraction.unkeyed].map((event) => event.field);
  return fields.length === 0 ? undefined : { text, eventFields: [...new Set(fields)] };
}

function keysOf(partText: string): string[] {
  const extraction = extractEvents(partText);
  return extraction.ok ? extraction.events.map((event) => event.key) : [];
}

interface Replacement {
  readonly span: Span;
  readonly text: string;
}

/** The text of `container` with each replacement's span (inside it, not overlapping) replaced. */
function splice(text: string, container: Span, replacements: readonly Replacement[]): string {
  let out = '';
  let cursor = container.start;
  for (const { span, text: replacement } of [...replacements].sort((a, b) => a.span.start - b.span.start)) {
    out += text.slice(cursor, span.start) + replacement;
    cursor = span.end;
  }
  return out + text.slice(cursor, container.end);
}

const sliceOf = (text: string, span: Span) => text.slice(span.start, span.end);

function renderConversation(
  text: string,
  envelope: EnvelopeRead,
  conversation: string,
  places: readonly { entry: EntryWithMessages; changes: readonly MessagesChange[] }[],
): string {
  const spans = (list: readonly Span[]) => `[${list.map((span) => sliceOf(text, span)).join(',')}]`;
  const entries = places.map(({ entry, changes }) => {
    const rendered = changes.map((change) => {
      const mine = change.conversations.get(conversation) as ConversationInChange;
      const replacements: Replacement[] = [
        { span: change.messagesArray, text: spans(mine.messages) },
        ...change.others.map((span) => ({ span, text: '[]' })),
      ];
      const { contacts } = change;
      if (contacts !== undefined) {
        const own = new Set<Span>(contacts.anonymous);
        for (const waId of mine.waIds) for (const span of contacts.byWaId.get(waId) ?? []) own.add(span);
        for (const userId of mine.userIds)
          for (const span of contacts.byUserId.get(userId) ?? []) own.add(span);
        const kept = [...own].sort((a, b) => a.start - b.start);
        replacements.push({ span: contacts.array, text: spans(kept) });
      }
      return splice(text, change.span, replacements);
    });
    return splice(text, entry.span, [{ span: entry.changesArray, text: `[${rendered.join(',')}]` }]);
  });
  return splice(text, envelope.span, [{ span: envelope.entryArray, text: `[${entries.join(',')}]` }]);
}

interface EnvelopeRead {
  readonly span: Span;
  readonly entryArray: Span;
  /** Only the entries holding inbound messages. */
  readonly entries: readonly EntryWithMessages[];
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
    let entries: ArrayRead | undefined;
    const end = walkObject(text, start, (name, valueStart) => {
      if (name !== 'entry') return skipValue(text, valueStart);
      entries = this.#readArray(valueStart);
      return entries?.span.end ?? skipValue(text, valueStart);
    });
    if (entries === undefined) return undefined;
    const withMessages: EntryWithMessages[] = [];
    for (const element of entries.elements) {
      const entry = this.#readEntry(element);
      if (entry !== undefined) withMessages.push(entry);
    }
    return { span: { start, end }, entryArray: entries.span, entries: withMessages };
  }

  #readEntry(span: Span): EntryWithMessages | undefined {
    const text = this.#text;
    if (!isObjectAt(text, span.start)) return undefined;
    let changes: ArrayRead | undefined;
    walkObject(text, span.start, (name, valueStart) => {
      if (name !== 'changes') return skipValue(text, valueStart);
      changes = this.#readArray(valueStart);
      return changes?.span.end ?? skipValue(text, valueStart);
    });
    if (changes === undefined) return undefined;
    const withMessages: MessagesChange[] = [];
    for (const element of changes.elements) {
      const change = this.#readChange(element);
      if (change !== undefined) withMessages.push(change);
    }
    return withMessages.length === 0
      ? undefined
      : { span, changesArray: changes.span, changes: withMessages };
  }

  #readChange(span: Span): MessagesChange | undefined {
    const text = this.#text;
    if (!isObjectAt(text, span.start)) return undefined;
    let field: string | undefined;
    let value: Span | undefined;
    walkObject(text, span.start, (name, valueStart) => {
      const valueEnd = skipValue(text, valueStart);
      if (name === 'field') field = this.#stringAt(valueStart, valueEnd);
      else if (name === 'value') value = { start: valueStart, end: valueEnd };
      return valueEnd;
    });
    // `field` may come after `value` (Meta writes it last): the value is read once the change is.
    if (field !== MESSAGE_LANE_FIELD || value === undefined || !isObjectAt(text, value.start))
      return undefined;

    let phoneNumberId: string | undefined;
    let messages: ArrayRead | undefined;
    let contacts: ArrayRead | undefined;
    const others = new Map<string, Span>();
    walkObject(text, value.start, (name, memberStart) => {
      const memberEnd = skipValue(text, memberStart);
      const member = { start: memberStart, end: memberEnd };
      if (name === 'metadata') phoneNumberId = this.#memberString(member, 'phone_number_id');
      else if (name === MESSAGE_LANE_FIELD) messages = this.#readArray(memberStart);
      else if (name === 'contacts') contacts = this.#readArray(memberStart);
      else if (OTHER_EVENT_ARRAYS.has(name)) {
        if (isArrayAt(text, memberStart)) others.set(name, member);
        else others.delete(name);
      }
      return memberEnd;
    });
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
      span,
      messagesArray: messages.span,
      conversations,
      strays,
      contacts: contactsRead,
      others: [...others.values()],
    };
  }

  #contacts({ span, elements }: ArrayRead): Contacts {
    const byWaId = new Map<string, Span[]>();
    const byUserId = new Map<string, Span[]>();
    const userIdOfWaId = new Map<string, string>();
    const anonymous: Span[] = [];
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
      if (waId === undefined && userId === undefined) anonymous.push(contact);
    }
    return { array: span, byWaId, byUserId, userIdOfWaId, anonymous };
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
        found[member as N] = this.#stringAt(valueStart, valueEnd);
      }
      return valueEnd;
    });
    return found;
  }

  #stringAt(start: number, end: number): string | undefined {
    return isStringAt(this.#text, start) ? decodeString(this.#text, start, end) : undefined;
  }
}
