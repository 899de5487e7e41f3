/**
 * Properties of the Groups API keys (docs/design.md §1): two items of `value.groups[]` share a key exactly when
 * their identities are equal (timestamp, group id, type, request id else join request id, and for
 * `group_participants_update` the customers the item names, each with its list), whatever the members hold
 * (separators `:` and `,`, the escape `%`, the missing-part mark `-`, `=`, empty strings); and the order in
 * which Meta lists an item's customers never changes its key.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { extractEvents } from '../../../functions/events/extract-events.ts';
import { GROUP_FIELDS } from '../../../functions/events/group-item.ts';

const WABA = '184735920115467';
const LISTS = ['added_participants', 'removed_participants', 'failed_participants'] as const;

// Units that could pass for a separator, an escape, a missing part or another customer (`,added=`).
const tricky = fc.string({
  unit: fc.constantFrom('1', ':', '%', '-', ',', '=', '2C', ',added=', ',removed='),
  maxLength: 3,
});
const maybe = fc.option(tricky, { nil: undefined });
const timestamp = fc.oneof(maybe, fc.integer({ min: 0, max: 3 }));

interface Participant {
  wa_id?: string;
  user_id?: string;
  input?: string;
}

const participant: fc.Arbitrary<Participant> = fc.record(
  { wa_id: tricky, user_id: tricky, input: tricky },
  { requiredKeys: [] },
);

interface GroupItem {
  timestamp?: string | number;
  group_id?: string;
  type?: string;
  request_id?: string;
  join_request_id?: string;
  wa_id?: string;
  user_id?: string;
  added_participants?: Participant[];
  removed_participants?: Participant[];
  failed_participants?: Participant[];
}

const list = fc.option(fc.array(participant, { maxLength: 3 }), { nil: undefined });

const groupItem: fc.Arbitrary<GroupItem> = fc
  .record({
    timestamp,
    group_id: maybe,
    type: maybe,
    request_id: maybe,
    join_request_id: maybe,
    wa_id: maybe,
    user_id: maybe,
    added_participants: list,
    removed_participants: list,
    failed_participants: list,
  })
  .map(
    (item) =>
      Object.fromEntries(Object.entries(item).filter(([, value]) => value !== undefined)) as GroupItem,
  );

function isAbsent(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

/** The first present value, else the first one as it is (`''` stays `''`, a missing one is `null`). */
function firstPresent(...values: unknown[]): unknown {
  return values.find((value) => !isAbsent(value)) ?? values[0] ?? null;
}

function scalar(value: unknown): unknown {
  return value === undefined || value === null ? null : String(value);
}

/** An item's identity as docs/design.md §1 and the brief define it, computed independently of the code. */
function identity(field: string, item: GroupItem): unknown[] {
  const base = [scalar(item.timestamp), scalar(item.group_id), scalar(item.type)];
  if (field === 'group_status_update') return base;
  if (field !== 'group_participants_update') return [...base, scalar(item.request_id)];
  const customers: string[] = [];
  for (const name of LISTS) {
    for (const member of item[name] ?? []) {
      customers.push(
        JSON.stringify([name, scalar(firstPresent(member.wa_id, member.user_id, member.input))]),
      );
    }
  }
  if (!isAbsent(item.wa_id) || !isAbsent(item.user_id)) {
    customers.push(JSON.stringify(['requester', firstPresent(item.wa_id, item.user_id)]));
  }
  return [...base, scalar(firstPresent(item.request_id, item.join_request_id)), customers.sort()];
}

function keysOf(field: string, items: readonly GroupItem[]): string[] {
  const body = {
    object: 'whatsapp_business_account',
    entry: [{ id: WABA, time: 1, changes: [{ field, value: { groups: items } }] }],
  };
  const extraction = extractEvents(JSON.stringify(body));
  if (!extraction.ok) throw new Error('expected an envelope');
  return extraction.events.map((event) => event.key);
}

/** `item` with one identity member changed (possibly to a value that leaves its identity as it was). */
function mutated(item: GroupItem): fc.Arbitrary<GroupItem> {
  const member = fc.constantFrom(
    'timestamp',
    'group_id',
    'type',
    'request_id',
    'join_request_id',
    'wa_id',
    'user_id',
  );
  const setMember = fc.tuple(member, maybe).map(([name, value]) => ({ ...item, [name]: value }) as GroupItem);
  const changeCustomer = fc
    .tuple(fc.constantFrom(...LISTS), fc.nat(), fc.option(participant, { nil: undefined }))
    .map(([name, index, replacement]) => {
      const members = [...(item[name] ?? [])];
      const at = members.length === 0 ? 0 : index % (members.length + 1);
      if (replacement === undefined) members.splice(at, 1);
      else members.splice(at, 1, replacement);
      return { ...item, [name]: members };
    });
  const otherCustomers = fc
    .record({ added_participants: list, removed_participants: list, failed_participants: list })
    .map((lists) => {
      const changed: GroupItem = { ...item };
      for (const name of LISTS) {
        if (lists[name] === undefined) delete changed[name];
        else changed[name] = lists[name];
      }
      return changed;
    });
  return fc.oneof(setMember, changeCustomer, otherCustomers);
}

/**
 * One customer whose id reads like two (`x,added=y`) against those two: apart only if `,` inside an id is
 * encoded. Random strings almost never line up like this, so it is built on purpose.
 */
const oneCustomerPassingForTwo = fc
  .tuple(groupItem, fc.constantFrom(...LISTS), fc.constantFrom(...LISTS), tricky, tricky)
  .map(([item, first, second, x, y]): [GroupItem, GroupItem] => {
    const { added_participants, removed_participants, failed_participants, ...rest } = item;
    const two: GroupItem = { ...rest, [first]: [{ input: x }] };
    two[second] = [...(two[second] ?? []), { input: y }];
    const one: GroupItem = { ...rest, [first]: [{ input: `${x},${second.split('_')[0]}=${y}` }] };
    return [one, two];
  });

const pair = fc.oneof(
  groupItem.chain((a) => fc.tuple(fc.constant(a), fc.oneof(groupItem, mutated(a)))),
  oneCustomerPassingForTwo,
);

describe('property: Groups API items get distinct keys exactly when their identities differ', () => {
  it.each(GROUP_FIELDS.map((field) => [field]))('%s', (field) => {
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const keys = keysOf(field, [a, b]);
        expect(keys).toHaveLength(2);
        const sameIdentity = JSON.stringify(identity(field, a)) === JSON.stringify(identity(field, b));
        expect(keys[0] === keys[1]).toBe(sameIdentity);
      }),
      { numRuns: field === 'group_participants_update' ? 2000 : 500 },
    );
  });
});

describe('property: the order of an item’s customers never changes its key', () => {
  it('group_participants_update, any reordering of each participant list', () => {
    const shuffled = groupItem.chain((item) =>
      fc.tuple(
        fc.constant(item),
        fc
          .tuple(
            ...LISTS.map((name) =>
              fc.shuffledSubarray(item[name] ?? [], {
                minLength: (item[name] ?? []).length,
                maxLength: (item[name] ?? []).length,
              }),
            ),
          )
          .map(([added, removed, failed]) => {
            const reordered: GroupItem = { ...item };
            if (item.added_participants !== undefined) reordered.added_participants = added;
            if (item.removed_participants !== undefined) reordered.removed_participants = removed;
            if (item.failed_participants !== undefined) reordered.failed_participants = failed;
            return reordered;
          }),
      ),
    );
    fc.assert(
      fc.property(shuffled, ([item, reordered]) => {
        const [original, again] = keysOf('group_participants_update', [item, reordered]);
        expect(again).toBe(original);
      }),
      { numRuns: 1000 },
    );
  });
});
