/**
 * How ops applies a subscriber's `numbers` and `wabas` beside its `fields`: the targets carry them, a key or a
 * body's event says what it can of its origin, `key`/`keys` and `replay` judge events by the whole selection,
 * and `smoke` addresses its bodies so that the receiver routes one to every limited subscriber.
 */
import { describe, expect, it } from 'vitest';
import { extractEvents } from '../../../../functions/events/extract-events.ts';
import type { LocalSubscriberInfo } from '../../../local/local-stack-api.ts';
import {
  envelope,
  inboundMessagesWithIds,
  messagesChange,
  PHONE_NUMBER_ID,
  WABA_ID,
  webhookPayload,
} from '../../../meta-traffic/webhook-bodies.ts';
import { eventKeyShape, eventShapeOf } from '../../../ops/inspect/event-key-shape.ts';
import { receivesOrigin } from '../../../ops/inspect/key-lookup.ts';
import { subscriberKeys } from '../../../ops/replay/run-replay.ts';
import { DEFAULT_SMOKE_ADDRESS, smokeAddresses, smokeBody } from '../../../ops/smoke/smoke-body.ts';
import { subscriberTargets } from '../../../ops/target/local-target.ts';
import { notReceivedBecause, originLimits } from '../../../ops/target/subscriber-selection.ts';

const OTHER_NUMBER = '106540352242999';
const OTHER_WABA = '102290129340777';

describe('the local target', () => {
  it('takes each subscriber’s numbers and wabas from /local/info, null as no limit', () => {
    const info = (name: string, numbers: string[] | null, wabas: string[] | null): LocalSubscriberInfo => ({
      name,
      entry: 'x.ts',
      fields: null,
      numbers,
      wabas,
      keyNamespace: null,
      handlers: [],
      queueUrl: `q-${name}`,
      dlqUrl: `dlq-${name}`,
      settings: {} as LocalSubscriberInfo['settings'],
    });
    const targets = subscriberTargets({
      subscribers: [
        info('crm', null, null),
        info('tenant', [PHONE_NUMBER_ID], null),
        info('brand', null, [WABA_ID]),
      ],
    });

    expect(targets.map(({ name, numbers, wabas }) => [name, numbers, wabas])).toEqual([
      ['crm', undefined, undefined],
      ['tenant', [PHONE_NUMBER_ID], undefined],
      ['brand', undefined, [WABA_ID]],
    ]);
  });
});

describe('what a key tells of its origin', () => {
  it.each([
    ['msg:wamid.A', undefined, undefined],
    ['st:wamid.A:read', undefined, undefined],
    [`err:${WABA_ID}:1750000000:${PHONE_NUMBER_ID}:131051`, PHONE_NUMBER_ID, WABA_ID],
    [`account_update:${WABA_ID}:1750000000:VERIFIED_ACCOUNT:-`, undefined, WABA_ID],
    // An entry id that is no Meta id tells nothing.
    ['calls:-:2:wacid.X:RINGING', undefined, undefined],
  ])('%s: number %s, WABA %s', (key, phoneNumberId, wabaId) => {
    expect(eventKeyShape(key).origin).toEqual({ phoneNumberId, wabaId, exact: false });
  });

  it('a body’s event carries its whole origin', () => {
    const extraction = extractEvents(envelope([messagesChange(inboundMessagesWithIds(['wamid.B']))]));
    if (!extraction.ok) throw new Error('no events');
    const [event] = extraction.events;
    expect(eventShapeOf(event as (typeof extraction.events)[number]).origin).toEqual({
      phoneNumberId: PHONE_NUMBER_ID,
      wabaId: WABA_ID,
      exact: true,
    });
  });
});

describe('whether a subscriber receives an event of an origin', () => {
  const numbers = { numbers: [PHONE_NUMBER_ID] };
  const wabas = { wabas: [WABA_ID] };
  const both = { numbers: [PHONE_NUMBER_ID], wabas: [WABA_ID] };
  const exact = (phoneNumberId: string | undefined, wabaId: string | undefined) => ({
    phoneNumberId,
    wabaId,
    exact: true,
  });
  const fromKey = (phoneNumberId: string | undefined, wabaId: string | undefined) => ({
    phoneNumberId,
    wabaId,
    exact: false,
  });

  it.each([
    ['no limit, nothing known', {}, fromKey(undefined, undefined), true],
    ['its number', numbers, exact(PHONE_NUMBER_ID, WABA_ID), true],
    ['another number', numbers, exact(OTHER_NUMBER, WABA_ID), false],
    ['an account event, numbers only', numbers, exact(undefined, WABA_ID), false],
    ['an account event of its WABA', wabas, exact(undefined, WABA_ID), true],
    ['a number of its WABA', wabas, exact(OTHER_NUMBER, WABA_ID), true],
    ['a msg: key, numbers', numbers, fromKey(undefined, undefined), undefined],
    ['a msg: key, wabas', wabas, fromKey(undefined, undefined), undefined],
    ['an err: key of another number', numbers, fromKey(OTHER_NUMBER, WABA_ID), false],
    ['a key of another WABA, wabas only', wabas, fromKey(undefined, OTHER_WABA), false],
    ['a key of its WABA', both, fromKey(undefined, WABA_ID), true],
    // Another WABA's key may still be of one of its numbers: the key does not say.
    ['a key of another WABA, numbers and wabas', both, fromKey(undefined, OTHER_WABA), undefined],
  ])('%s', (_case, selection, origin, expected) => {
    expect(receivesOrigin(selection, origin)).toBe(expected);
  });

  it('says why not, field first, then number or WABA', () => {
    const tenant = { fields: ['messages'], numbers: [PHONE_NUMBER_ID], wabas: undefined };
    expect(originLimits(tenant)).toBe(`numbers ${PHONE_NUMBER_ID}`);
    expect(originLimits({ fields: undefined, numbers: undefined, wabas: undefined })).toBeUndefined();
    expect(
      notReceivedBecause(tenant, { field: 'calls', phoneNumberId: PHONE_NUMBER_ID, wabaId: WABA_ID }),
    ).toBe('field calls is not among its fields (messages)');
    expect(
      notReceivedBecause(tenant, { field: 'messages', phoneNumberId: OTHER_NUMBER, wabaId: WABA_ID }),
    ).toBe(`phone number ${OTHER_NUMBER} (WABA ${WABA_ID}) is outside its numbers ${PHONE_NUMBER_ID}`);
    expect(
      notReceivedBecause(tenant, { field: 'messages', phoneNumberId: PHONE_NUMBER_ID, wabaId: WABA_ID }),
    ).toBeUndefined();
  });
});

describe('replay counts the events of the subscriber’s numbers and wabas', () => {
  const body = JSON.stringify(
    webhookPayload([
      messagesChange(inboundMessagesWithIds(['wamid.MINE'])),
      messagesChange(inboundMessagesWithIds(['wamid.THEIRS']), {
        display_phone_number: '15550000001',
        phone_number_id: OTHER_NUMBER,
      }),
    ]),
  );

  it.each([
    [{ fields: undefined }, ['msg:wamid.MINE', 'msg:wamid.THEIRS']],
    [{ fields: undefined, numbers: [PHONE_NUMBER_ID] }, ['msg:wamid.MINE']],
    [{ fields: undefined, numbers: [OTHER_NUMBER] }, ['msg:wamid.THEIRS']],
    [{ fields: undefined, wabas: [WABA_ID] }, ['msg:wamid.MINE', 'msg:wamid.THEIRS']],
    [{ fields: undefined, wabas: [OTHER_WABA] }, []],
    [{ fields: ['calls'], numbers: [PHONE_NUMBER_ID] }, []],
  ])('%j', (selection, keys) => {
    expect(subscriberKeys(body, selection).map(({ key }) => key)).toEqual(keys);
  });
});

describe('the smoke test’s addresses', () => {
  const subscriber = (name: string, numbers?: string[], wabas?: string[]) => ({ name, numbers, wabas });

  it('the smoke test’s own ids when no subscriber is limited', () => {
    expect(smokeAddresses([subscriber('bot'), subscriber('crm')])).toEqual([DEFAULT_SMOKE_ADDRESS]);
  });

  it('a limited subscriber’s first number (under the smoke test’s WABA), else its first WABA; none for one already reached', () => {
    expect(
      smokeAddresses([
        subscriber('crm'),
        subscriber('tenant', [PHONE_NUMBER_ID, OTHER_NUMBER]),
        subscriber('desk', [OTHER_NUMBER, PHONE_NUMBER_ID]),
        subscriber('brand', undefined, [WABA_ID, OTHER_WABA]),
        subscriber('group', [OTHER_NUMBER], [WABA_ID]),
      ]),
    ).toEqual([
      { phoneNumberId: PHONE_NUMBER_ID, wabaId: DEFAULT_SMOKE_ADDRESS.wabaId, chosenFor: 'tenant' },
      { phoneNumberId: DEFAULT_SMOKE_ADDRESS.phoneNumberId, wabaId: WABA_ID, chosenFor: 'brand' },
    ]);
  });

  it('addresses the body’s metadata and entry, the wamids still the smoke test’s', () => {
    const address = { phoneNumberId: PHONE_NUMBER_ID, wabaId: WABA_ID, chosenFor: 'tenant' };
    const smoke = smokeBody('run-1', 1_780_000_000_000, address);
    const extraction = extractEvents(smoke.body);
    if (!extraction.ok) throw new Error('no events');

    expect(extraction.events.map(({ key, phoneNumberId, wabaId }) => [key, phoneNumberId, wabaId])).toEqual([
      [smoke.messageKey, PHONE_NUMBER_ID, WABA_ID],
      [smoke.statusKey, PHONE_NUMBER_ID, WABA_ID],
    ]);
    expect(smoke.messageKey).toBe('msg:wamid.SMOKE_TEST.run-1');
  });
});
