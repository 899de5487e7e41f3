/**
 * The key recipes of docs/design.md §1 as data: for each documented webhook field, which items are events and which
 * values, in which order, make their key. `extract-events.ts` walks a body with this table; the receiver's
 * splitter asks it which arrays it may cut between.
 */
import { canonicalJsonSha256 } from './content-digest.ts';
import { groupCustomersKeyPart } from './group-item.ts';
import type { KeySources } from './key-parts.ts';
import type { EventKind } from './types.ts';

/** Where a key part is read: the entry, the change value, or the event's item (for per-change fields the
 * item is the change value itself). */
export type PartRoot = 'entry' | 'value' | 'item';

export interface KeyPart {
  readonly root: PartRoot;
  /** Property names from the root, e.g. `['metadata', 'timestamp']`. */
  readonly path: readonly string[];
  /**
   * Read instead when this part is missing, null or empty: a customer is named by the phone number where the
   * event has it, else by the business-scoped user id (docs/design.md §1, "Customers").
   */
  readonly otherwise?: KeyPart;
}

/**
 * A part that is no single member: the customers a group item names, the digest of a value. `compute` returns
 * the part as it goes into the key, already encoded (no `:`, and `%` only as an escape).
 */
export interface ComputedKeyPart {
  readonly compute: (sources: KeySources) => string;
}

export type RecipePart = KeyPart | ComputedKeyPart;

export interface EventRecipe {
  /**
   * The member names, from `change.value`, of the array whose items are one event each (`['statuses']`;
   * `['standby', 'messages']` one level deeper), or `null`: one event per change.
   */
  readonly itemsPath: readonly string[] | null;
  readonly kind: EventKind;
  readonly metricField: string;
  readonly keyPrefix: string;
  readonly parts: readonly RecipePart[];
  /** A part appended only when present and not null (a group status's participant). */
  readonly optionalPart?: KeyPart;
  /**
   * The item's own identity (a message's or status's `id`): without a usable one the item gets no key, and is
   * reported as unkeyed instead of being run under `msg:-` and deduplicated against every other such item.
   */
  readonly identity?: KeyPart;
}

function part(root: PartRoot, dottedPath: string): KeyPart {
  return { root, path: dottedPath.split('.') };
}

/** `first`, else `second` where `first` is missing, null or empty. */
function orElse(first: KeyPart, second: KeyPart): KeyPart {
  return { ...first, otherwise: second };
}

/** The customer's phone number where the event has it, else their business-scoped user id (BSUID). */
const phoneElseUserId = orElse;

const ENTRY_ID = part('entry', 'id');
const ENTRY_TIME = part('entry', 'time');

/**
 * `<field>:<entry.id>:<ts>:<values…>`, one event per change (the item is the change value). A string value is a
 * dotted path in the change value.
 */
function perChange(
  field: string,
  timestamp: KeyPart,
  values: readonly (string | RecipePart)[],
): EventRecipe[] {
  return [
    {
      itemsPath: null,
      kind: 'management',
      metricField: field,
      keyPrefix: field,
      parts: [
        ENTRY_ID,
        timestamp,
        ...values.map((value) => (typeof value === 'string' ? part('item', value) : value)),
      ],
    },
  ];
}

/** `<prefix>:<entry.id>:<ts>:<values…>` (the prefix is the field), one event per item of the array at `itemsPath`. */
function perItem(
  field: string,
  itemsPath: string,
  timestamp: KeyPart,
  values: readonly RecipePart[],
  more: Pick<EventRecipe, 'optionalPart' | 'identity'> = {},
): EventRecipe[] {
  return [
    {
      itemsPath: itemsPath.split('.'),
      kind: 'management',
      metricField: field,
      keyPrefix: field,
      parts: [ENTRY_ID, timestamp, ...values],
      ...more,
    },
  ];
}

/**
 * A Groups API field: one event per item of `value.groups[]`, `<field>:<entry.id>:<item.timestamp>:<group_id>:<type>`
 * and then `values`.
 */
function perGroupItem(field: string, values: readonly RecipePart[]): EventRecipe[] {
  return perItem(field, 'groups', part('item', 'timestamp'), [
    part('item', 'group_id'),
    part('item', 'type'),
    ...values,
  ]);
}

/** Every customer a group item names (group-item.ts), sorted, in one part. */
const GROUP_CUSTOMERS: ComputedKeyPart = { compute: ({ item }) => groupCustomersKeyPart(item) };

/** For a field whose payload Meta does not show: the digest of the whole change value (content-digest.ts). */
const VALUE_DIGEST: ComputedKeyPart = { compute: ({ value }) => canonicalJsonSha256(value) };

/** A group send's status names its participant: the phone number, else the BSUID. */
const STATUS_PARTICIPANT = phoneElseUserId(
  part('item', 'recipient_participant_id'),
  part('item', 'recipient_participant_user_id'),
);

/** Within one `messages` change: every message, then every status, then every value-level error. */
const MESSAGES_RECIPES: EventRecipe[] = [
  {
    itemsPath: ['messages'],
    kind: 'message',
    metricField: 'message',
    keyPrefix: 'msg',
    parts: [part('item', 'id')],
    identity: part('item', 'id'),
  },
  {
    itemsPath: ['statuses'],
    kind: 'status',
    metricField: 'status',
    keyPrefix: 'st',
    parts: [part('item', 'id'), part('item', 'status')],
    optionalPart: STATUS_PARTICIPANT,
    identity: part('item', 'id'),
  },
  {
    itemsPath: ['errors'],
    kind: 'error',
    metricField: 'error',
    keyPrefix: 'err',
    parts: [ENTRY_ID, ENTRY_TIME, part('value', 'metadata.phone_number_id'), part('item', 'code')],
  },
];

/**
 * `standby`: the passive copies of a conversation another sender (Meta Business Agent) owns, one level deeper
 * than on `messages` (`value.standby.messages[]`, …). Prefixed `standby` so that a copy never deduplicates
 * against the owner's own event of the same wamid; never kind `message` or `status`, so a standby message
 * never reaches `onMessage` (answering would take the thread) and a standby status never moves the ledger.
 */
const STANDBY_RECIPES: EventRecipe[] = [
  ...perItem('standby', 'standby.messages', part('item', 'timestamp'), [part('item', 'id')], {
    identity: part('item', 'id'),
  }),
  ...perItem('standby', 'standby.message_echoes', part('item', 'timestamp'), [part('item', 'id')], {
    identity: part('item', 'id'),
  }),
  ...perItem(
    'standby',
    'standby.statuses',
    part('item', 'timestamp'),
    [part('item', 'id'), part('item', 'status')],
    { optionalPart: STATUS_PARTICIPANT, identity: part('item', 'id') },
  ),
];

const FIELD_RULES: ReadonlyMap<string, readonly EventRecipe[]> = new Map<string, readonly EventRecipe[]>([
  ['messages', MESSAGES_RECIPES],
  [
    'message_template_status_update',
    perChange('message_template_status_update', ENTRY_TIME, ['message_template_id', 'event']),
  ],
  [
    'message_template_quality_update',
    perChange('message_template_quality_update', ENTRY_TIME, ['message_template_id', 'new_quality_score']),
  ],
  [
    'message_template_components_update',
    perChange('message_template_components_update', ENTRY_TIME, ['message_template_id']),
  ],
  [
    'template_category_update',
    perChange('template_category_update', ENTRY_TIME, [
      'message_template_id',
      'new_category',
      'correct_category',
    ]),
  ],
  [
    'phone_number_name_update',
    perChange('phone_number_name_update', ENTRY_TIME, ['display_phone_number', 'decision']),
  ],
  [
    'phone_number_quality_update',
    perChange('phone_number_quality_update', ENTRY_TIME, ['display_phone_number', 'event']),
  ],
  ['account_update', perChange('account_update', ENTRY_TIME, ['event', 'waba_info.waba_id'])],
  ['account_review_update', perChange('account_review_update', ENTRY_TIME, ['decision'])],
  [
    'account_alerts',
    perChange('account_alerts', ENTRY_TIME, ['entity_type', 'entity_id', 'alert_info.alert_type']),
  ],
  ['business_capability_update', perChange('business_capability_update', ENTRY_TIME, [])],
  ['security', perChange('security', ENTRY_TIME, ['display_phone_number', 'event'])],
  ['flows', perChange('flows', ENTRY_TIME, ['event', 'flow_id'])],
  ['partner_solutions', perChange('partner_solutions', ENTRY_TIME, ['solution_id', 'solution_status'])],
  [
    'payment_configuration_update',
    perChange('payment_configuration_update', part('item', 'updated_timestamp'), [
      'configuration_name',
      'status',
    ]),
  ],
  [
    'user_preferences',
    perItem('user_preferences', 'user_preferences', part('item', 'timestamp'), [
      phoneElseUserId(part('item', 'wa_id'), part('item', 'user_id')),
      part('item', 'category'),
      part('item', 'value'),
    ]),
  ],
  [
    'smb_app_state_sync',
    perItem('smb_app_state_sync', 'state_sync', part('item', 'metadata.timestamp'), [
      phoneElseUserId(part('item', 'contact.phone_number'), part('item', 'contact.user_id')),
      part('item', 'action'),
    ]),
  ],
  [
    'smb_message_echoes',
    perItem('smb_message_echoes', 'message_echoes', part('item', 'timestamp'), [part('item', 'id')]),
  ],
  [
    'automatic_events',
    perItem('automatic_events', 'automatic_events', part('item', 'timestamp'), [
      part('item', 'id'),
      part('item', 'event_name'),
    ]),
  ],
  [
    'history',
    perItem('history', 'history', ENTRY_TIME, [
      part('value', 'metadata.phone_number_id'),
      part('item', 'metadata.phase'),
      part('item', 'metadata.chunk_order'),
    ]),
  ],
  [
    'calls',
    [
      ...perItem('calls', 'calls', part('item', 'timestamp'), [part('item', 'id'), part('item', 'event')]),
      // Business-initiated call states (`RINGING`, `ACCEPTED`, `REJECTED`): management events like the rest
      // of `calls`, never kind `status`, so they stay out of the message status ledger (docs/design.md §3).
      ...perItem('calls', 'statuses', part('item', 'timestamp'), [
        part('item', 'id'),
        part('item', 'status'),
      ]),
    ],
  ],
  ['group_lifecycle_update', perGroupItem('group_lifecycle_update', [part('item', 'request_id')])],
  [
    'group_participants_update',
    perGroupItem('group_participants_update', [
      orElse(part('item', 'request_id'), part('item', 'join_request_id')),
      GROUP_CUSTOMERS,
    ]),
  ],
  ['group_settings_update', perGroupItem('group_settings_update', [part('item', 'request_id')])],
  ['group_status_update', perGroupItem('group_status_update', [])],
  [
    'message_echoes',
    perItem('message_echoes', 'message_echoes', part('item', 'timestamp'), [part('item', 'id')], {
      identity: part('item', 'id'),
    }),
  ],
  [
    'messaging_handovers',
    perChange('messaging_handovers', part('item', 'timestamp'), [
      'recipient.phone_number_id',
      phoneElseUserId(part('item', 'sender.phone_number'), part('item', 'sender.user_id')),
      'type',
    ]),
  ],
  ['standby', STANDBY_RECIPES],
  // No payload of Meta's shows this field's members: keyed by its whole content (docs/design.md §1, provisional).
  ['consumer_profile', perChange('consumer_profile', ENTRY_TIME, [VALUE_DIGEST])],
  [
    'account_settings_update',
    perChange('account_settings_update', part('item', 'timestamp'), [
      'type',
      'phone_number_settings.phone_number_id',
    ]),
  ],
]);

/** The recipes of a documented field, in the order its events are walked; `undefined` for unknown fields. */
export function recipesFor(field: string): readonly EventRecipe[] | undefined {
  return FIELD_RULES.get(field);
}

export function isKnownField(field: string): boolean {
  return FIELD_RULES.has(field);
}

/** Every documented field, in docs/design.md §1 order (`messages` first). */
export const KNOWN_FIELDS: readonly string[] = [...FIELD_RULES.keys()];

// Only arrays that are members of `change.value` itself: the splitter cuts nothing deeper, so a value whose
// events sit one level down (`standby`) travels whole.
const ITEM_ARRAYS: ReadonlyMap<string, readonly string[]> = new Map(
  [...FIELD_RULES].map(([field, recipes]) => [
    field,
    Object.freeze(
      recipes.flatMap(({ itemsPath }) => (itemsPath?.length === 1 ? [itemsPath[0] as string] : [])),
    ),
  ]),
);
const NO_ARRAYS: readonly string[] = Object.freeze([]);

/**
 * The arrays inside `change.value` whose items are separate events for `field`, in walk order: a splitter
 * may spread their items over several bodies (keeping everything else of the value) without changing any
 * key. Empty for per-change fields, for fields whose events are nested deeper (`standby`) and for unknown
 * fields, whose value must travel whole.
 */
export function eventItemArrays(field: string): readonly string[] {
  return ITEM_ARRAYS.get(field) ?? NO_ARRAYS;
}
