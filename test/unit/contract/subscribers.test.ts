import { describe, expect, it } from 'vitest';
import { DEFAULT_FORWARD_TIMEOUT_SECONDS } from '../../../contract/forwarding.ts';
import { resolveMessageLane } from '../../../contract/lanes.ts';
import { resolveSettings, UnsafeSettingsError } from '../../../contract/settings.ts';
import {
  decodeSubscriberQueues,
  encodeSubscriberQueues,
  resolveSubscribers,
  type SubscriberDefinition,
  type SubscriberDefinitions,
  type SubscriberQueue,
  wantsField,
} from '../../../contract/subscribers.ts';

const BOT: SubscriberDefinition = { entry: 'functions/examples/subscribers/bot.ts', fields: ['messages'] };
const CRM: SubscriberDefinition = { entry: 'functions/examples/subscribers/crm.ts' };

/** The refusal `resolveSubscribers` throws for `definitions`, checked to be an UnsafeSettingsError. */
function refusal(definitions: SubscriberDefinitions, pipeline = {}): string {
  try {
    resolveSubscribers(definitions, pipeline);
  } catch (error) {
    expect(error).toBeInstanceOf(UnsafeSettingsError);
    return (error as Error).message;
  }
  throw new Error('resolveSubscribers accepted the definitions');
}

describe('resolveSubscribers', () => {
  it('resolves each subscriber with its name as namespace and the pipeline settings under its own', () => {
    const [bot, crm] = resolveSubscribers(
      { bot: BOT, crm: { ...CRM, settings: { maxConcurrency: 2 }, memorySize: 512 } },
      { batchSize: 5 },
    );
    expect(bot).toEqual({
      name: 'bot',
      entry: BOT.entry,
      fields: ['messages'],
      keyNamespace: 'bot',
      settings: resolveSettings({ batchSize: 5 }),
      statusLedger: undefined,
      claimUnhandledEvents: undefined,
      memorySize: undefined,
      messageLane: resolveMessageLane({ batchSize: 5 }, {}, ['messages']),
    });
    expect(bot?.messageLane?.ordered).toBe(true);
    expect(crm?.fields).toBeUndefined();
    expect(crm?.keyNamespace).toBe('crm');
    expect(crm?.settings).toEqual(resolveSettings({ batchSize: 5, maxConcurrency: 2 }));
    expect(crm?.memorySize).toBe(512);
  });

  it("keeps the keys of a subscriber with keyNamespace '' unprefixed, and an explicit namespace as given", () => {
    const [legacy, crm] = resolveSubscribers({
      legacy: { ...CRM, keyNamespace: '' },
      crm: { ...CRM, keyNamespace: 'crm.v2' },
    });
    expect(legacy?.keyNamespace).toBeUndefined();
    expect(crm?.keyNamespace).toBe('crm.v2');
  });

  it('drops repeated fields', () => {
    const [bot] = resolveSubscribers({ bot: { ...BOT, fields: ['messages', 'messages', 'calls'] } });
    expect(bot?.fields).toEqual(['messages', 'calls']);
  });

  it('refuses an empty definition set, pointing at the default', () => {
    expect(refusal({})).toMatch(/subscribers is empty.*leave it out for the single default subscriber/);
  });

  it.each(['Bot', '1bot', 'bot_crm', 'bot crm', '', `b${'x'.repeat(32)}`])(
    'refuses the name %j, which would not fit construct ids, queue names and claim keys',
    (name) => {
      expect(refusal({ [name]: CRM })).toBe(
        `Subscriber ${name}: the name must be lowercase letters, digits and "-", start with a letter and have at most 32 characters.`,
      );
    },
  );

  it('refuses a subscriber without an entry', () => {
    expect(refusal({ crm: { entry: '' } })).toMatch(/^Subscriber crm: entry is required/);
  });

  it('refuses an empty field list, which would receive nothing', () => {
    expect(refusal({ bot: { ...BOT, fields: [] } })).toMatch(/^Subscriber bot: fields is empty/);
  });

  it('refuses field names Meta never writes or does not document, naming them', () => {
    expect(
      refusal({ bot: { ...BOT, fields: ['messages', 'Messages', 'a,b', 'marketing_mirror_update'] } }),
    ).toBe(
      'Subscriber bot: "Messages", "a,b", "marketing_mirror_update" is not a webhook field Meta documents for whatsapp_business_account (contract/meta-webhook-fields.ts).',
    );
  });

  it('resolves numbers and wabas each once, in the order given, and leaves them out when not given', () => {
    const [brazil, crm] = resolveSubscribers({
      brazil: { ...BOT, numbers: ['201', '202', '201'], wabas: ['100'] },
      crm: CRM,
    });
    expect(brazil).toMatchObject({ numbers: ['201', '202'], wabas: ['100'] });
    expect(crm).toMatchObject({ numbers: undefined, wabas: undefined });
  });

  it.each([
    [
      'an empty numbers list',
      { numbers: [] },
      /^Subscriber bot: numbers is empty, so it would receive nothing/,
    ],
    ['an empty wabas list', { wabas: [] }, /^Subscriber bot: wabas is empty/],
    [
      'a phone number instead of its id',
      { numbers: ['+15550783881'] },
      /^Subscriber bot: numbers holds "\+15550783881": give Meta's ids as strings of digits/,
    ],
    ['a numeric id', { wabas: [102290129340398] }, /^Subscriber bot: wabas holds 102290129340398/],
    ['numbers that are not a list', { numbers: '201' }, /^Subscriber bot: numbers must be a list of ids/],
  ])('refuses %s', (_, selection, message) => {
    expect(refusal({ bot: { ...BOT, ...(selection as object) } })).toMatch(message);
  });

  it('refuses more numbers and wabas in all than the receiver environment holds', () => {
    const ids = (from: number, count: number) =>
      Array.from({ length: count }, (_, index) => String(106540352242000 + from + index));
    expect(() =>
      resolveSubscribers({ a: { ...CRM, numbers: ids(0, 60) }, b: { ...CRM, wabas: ids(100, 40) } }),
    ).not.toThrow();
    expect(
      refusal({
        a: { ...CRM, numbers: ids(0, 60) },
        b: { ...CRM, numbers: ids(100, 40), wabas: ids(200, 1) },
      }),
    ).toMatch(/^The subscribers list 101 numbers and wabas together, more than 100/);
  });

  it('takes the Groups API and override fields', () => {
    const fields = ['group_participants_update', 'standby', 'messaging_handovers', 'consumer_profile'];
    expect(resolveSubscribers({ bot: { ...BOT, fields } })[0]?.fields).toEqual(fields);
  });

  it('refuses a namespace with characters outside the claim key alphabet', () => {
    expect(refusal({ crm: { ...CRM, keyNamespace: 'crm#1' } })).toMatch(
      /^Subscriber crm: keyNamespace "crm#1" may hold/,
    );
  });

  it('refuses two subscribers sharing a namespace, naming both', () => {
    expect(
      refusal({ bot: { ...BOT, keyNamespace: 'shared' }, crm: { ...CRM, keyNamespace: 'shared' } }),
    ).toBe(
      'Subscribers bot and crm share the key namespace "shared": each subscriber needs its own, or one would skip the other\'s events as duplicates.',
    );
  });

  it("refuses a namespace equal to another subscriber's name", () => {
    expect(refusal({ bot: BOT, crm: { ...CRM, keyNamespace: 'bot' } })).toMatch(
      /^Subscribers bot and crm share the key namespace "bot"/,
    );
  });

  it("refuses two subscribers with unprefixed keys ('')", () => {
    expect(refusal({ bot: { ...BOT, keyNamespace: '' }, crm: { ...CRM, keyNamespace: '' } })).toMatch(
      /^Subscribers bot and crm share the key namespace ""/,
    );
  });

  it.each([
    ['receiverTimeoutSeconds', { receiverTimeoutSeconds: 5 }],
    ['maximumMessageSizeBytes', { maximumMessageSizeBytes: 1_048_576 }],
  ])('refuses %s on one subscriber: the receiver has one for the whole pipeline', (name, settings) => {
    expect(refusal({ crm: { ...CRM, settings: settings as SubscriberDefinition['settings'] } })).toBe(
      `Subscriber crm: ${name} belong to the whole pipeline (the receiver), not to one subscriber.`,
    );
  });

  it('ignores a pipeline-only setting given as undefined', () => {
    const settings = { maximumMessageSizeBytes: undefined } as SubscriberDefinition['settings'];
    expect(() => resolveSubscribers({ crm: { ...CRM, settings } })).not.toThrow();
  });

  it('names the subscriber whose own settings break a settings rule', () => {
    expect(refusal({ bot: BOT, crm: { ...CRM, settings: { retentionDays: 3 } } })).toMatch(
      /^Subscriber crm: retentionDays is 3, but Meta retries a webhook for up to 7 days/,
    );
  });

  it('checks a subscriber setting against the pipeline settings it inherits', () => {
    // 300 s suits the default 30 s consumer timeout, not the pipeline's 60 s (6 × 60 + 1 = 361).
    const crm = { ...CRM, settings: { visibilityTimeoutSeconds: 300 } };
    expect(() => resolveSubscribers({ crm })).not.toThrow();
    expect(refusal({ crm }, { consumerTimeoutSeconds: 60 })).toMatch(
      /^Subscriber crm: visibilityTimeoutSeconds is 300, below 6 × consumerTimeoutSeconds \(60\)/,
    );
  });
});

describe('wantsField', () => {
  it('gives every field to a subscriber without fields, and only its own fields to one with', () => {
    expect(wantsField(undefined, 'account_update')).toBe(true);
    expect(wantsField(['messages'], 'messages')).toBe(true);
    expect(wantsField(['messages'], 'account_update')).toBe(false);
  });
});

describe('SUBSCRIBER_QUEUES encoding', () => {
  const queues: SubscriberQueue[] = [
    { name: 'bot', queueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/bot', fields: ['messages'] },
    { name: 'crm', queueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/crm' },
    {
      name: 'brazil',
      queueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/brazil',
      numbers: ['106540352242922'],
      wabas: ['102290129340398'],
    },
  ];

  it('decodes what it encodes, without writing absent fields', () => {
    const encoded = encodeSubscriberQueues(queues);
    expect(JSON.parse(encoded)[1]).not.toHaveProperty('fields');
    expect(decodeSubscriberQueues(encoded)).toEqual(queues);
  });

  it('drops properties it does not know when decoding', () => {
    const raw = JSON.stringify([{ name: 'crm', queueUrl: 'https://q/crm', extra: 1 }]);
    expect(decodeSubscriberQueues(raw)).toEqual([{ name: 'crm', queueUrl: 'https://q/crm' }]);
  });

  it.each([
    ['not JSON', '[{name:'],
    ['an object', '{"name":"crm","queueUrl":"https://q/crm"}'],
    ['an empty array', '[]'],
  ])('refuses %s as a whole', (_, raw) => {
    expect(() => decodeSubscriberQueues(raw)).toThrow(/^SUBSCRIBER_QUEUES must be a (non-empty )?JSON array/);
  });

  it.each([
    ['null', null],
    ['a missing name', { queueUrl: 'https://q/crm' }],
    ['a numeric name', { name: 1, queueUrl: 'https://q/crm' }],
    ['a missing queue URL', { name: 'crm' }],
    ['an empty queue URL', { name: 'crm', queueUrl: '' }],
    ['fields that are not a list', { name: 'crm', queueUrl: 'https://q/crm', fields: 'messages' }],
    ['fields that are not strings', { name: 'crm', queueUrl: 'https://q/crm', fields: [1] }],
    ['numbers that are not a list', { name: 'crm', queueUrl: 'https://q/crm', numbers: '201' }],
    ['wabas that are not strings', { name: 'crm', queueUrl: 'https://q/crm', wabas: [100] }],
  ])('refuses an entry with %s, naming its index', (_, entry) => {
    const raw = JSON.stringify([{ name: 'bot', queueUrl: 'https://q/bot' }, entry]);
    expect(() => decodeSubscriberQueues(raw)).toThrow(
      'SUBSCRIBER_QUEUES[1] must be {name, queueUrl, fields?, numbers?, wabas?, messageQueueUrl?, messageLaneOrdered?}.',
    );
  });
});

describe('forward subscribers', () => {
  const resolve = (url: string, forwardLoopbackHttp: boolean) =>
    resolveSubscribers({ crm: { forward: { url } } }, {}, undefined, { forwardLoopbackHttp });

  it('take https anywhere, and http to a loopback address only in the local stack', () => {
    expect(resolve('https://crm.example.com/hook', false)[0]?.forward).toEqual({
      url: 'https://crm.example.com/hook',
      shape: 'meta',
      secretName: undefined,
      timeoutSeconds: DEFAULT_FORWARD_TIMEOUT_SECONDS,
      batch: false,
      headersSecretName: undefined,
      maxInFlight: undefined,
    });
    for (const loopback of ['http://127.0.0.1:9000/hook', 'http://localhost/hook', 'http://[::1]:8080/']) {
      expect(resolve(loopback, true)[0]?.forward?.url).toBe(loopback);
      expect(() => resolve(loopback, false)).toThrow(/forward\.url must be https/);
    }
    expect(() => resolve('http://crm.example.com/hook', true)).toThrow(/https \(or http to localhost/);
    expect(() => resolve('ftp://127.0.0.1/hook', true)).toThrow(UnsafeSettingsError);
  });

  it('have no entry, and a code subscriber no forward', () => {
    const [crm] = resolve('https://crm.example.com/hook', false);
    expect(crm?.entry).toBeUndefined();
    const [bot] = resolveSubscribers({ bot: { entry: 'src/bot.ts' } });
    expect(bot?.forward).toBeUndefined();
    expect(bot?.entry).toBe('src/bot.ts');
  });
});

describe('a forward subscriber with maxInFlight', () => {
  const URL_ = 'https://crm.example.com/hook';

  it("caps each lane's maxConcurrency at its share: the message lane takes the odd one", () => {
    const [crm] = resolveSubscribers({ crm: { forward: { url: URL_, maxInFlight: 7 } } });
    expect(crm?.settings.maxConcurrency).toBe(3);
    expect(crm?.messageLane?.settings.maxConcurrency).toBe(4);
  });

  it('leaves a lane below its share as it is', () => {
    const [crm] = resolveSubscribers({
      crm: { forward: { url: URL_, maxInFlight: 100 }, settings: { maxConcurrency: 5 } },
    });
    expect(crm?.settings.maxConcurrency).toBe(5);
    expect(crm?.messageLane?.settings.maxConcurrency).toBe(5);
  });

  it('gives all of it to the one lane of a subscriber without messages', () => {
    const [crm] = resolveSubscribers({
      crm: { forward: { url: URL_, maxInFlight: 2 }, fields: ['message_template_status_update'] },
    });
    expect(crm?.messageLane).toBeUndefined();
    expect(crm?.settings.maxConcurrency).toBe(2);
  });

  it('is refused where a lane would get less than 2, naming the minimum', () => {
    expect(refusal({ crm: { forward: { url: URL_, maxInFlight: 3 } } })).toBe(
      "Subscriber crm: forward.maxInFlight is 3: the minimum with a message lane and a status lane is 4, since Lambda's SQS event source cannot be held below 2 concurrent invocations of a lane, each with one POST at least.",
    );
    expect(refusal({ crm: { forward: { url: URL_, maxInFlight: 1 }, fields: ['account_update'] } })).toMatch(
      /^Subscriber crm: forward\.maxInFlight is 1: use a whole number, at least 2 per lane/,
    );
  });

  it('is refused with batch on the event shape, and headers with an empty name', () => {
    expect(
      refusal({ crm: { forward: { url: URL_, shape: 'event', secretName: 'whsec', batch: true } } }),
    ).toMatch(/^Subscriber crm: forward\.batch needs shape "meta"/);
    expect(refusal({ crm: { forward: { url: URL_, headersSecretName: '' } } })).toMatch(
      /forward\.headersSecretName must name/,
    );
  });
});
