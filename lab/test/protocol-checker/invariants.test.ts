/**
 * The invariants on made-up journals: each case is a story of claims, effects, answers and deaths, small
 * enough to read, that the checker must judge as the header of invariants.ts says. Cases (a) and (b) passed
 * an earlier, looser rule, under which any window on a key excused an extra effect.
 */
import { describe, expect, it } from 'vitest';
import {
  checkInvariants,
  type InvariantName,
  type InvariantReport,
} from '../../protocol-checker/invariants.ts';
import { ProtocolJournal } from '../../protocol-checker/protocol-journal.ts';
import type { QueueMessage } from '../../protocol-checker/standard-queue.ts';
import {
  outboundLedgers,
  type PlannedBody,
  type PlannedEvent,
  type Workload,
} from '../../protocol-checker/workload.ts';

const KEY = 'msg:wamid.in0';

class Story {
  readonly journal = new ProtocolJournal();
  readonly #owners = new Map<string, string>();

  /** `worker` claims `key` (fresh or takeover) for message `messageId`, its lease until `leaseUntil`. */
  claim(worker: string, at: number, leaseUntil: number, messageId = 'msg-001', key = KEY): this {
    const owner = `owner-${worker}`;
    this.#owners.set(worker, owner);
    this.journal.recordWrite(
      { worker, operation: 'claim', pk: key, succeeded: true, at },
      claimItem(key, 'processing', owner, leaseUntil, messageId),
    );
    return this.answer(worker, 'claim', 'ok', at, key);
  }

  /** `worker`'s claim is refused: the item stays as `holder` left it. */
  refusedClaim(
    worker: string,
    at: number,
    holder: { state: string; worker: string; leaseUntil?: number; messageId?: string },
    key = KEY,
  ): this {
    this.journal.recordWrite(
      { worker, operation: 'claim', pk: key, succeeded: false, at },
      claimItem(
        key,
        holder.state,
        `owner-${holder.worker}`,
        holder.leaseUntil,
        holder.messageId ?? 'msg-001',
      ),
    );
    return this.answer(worker, 'claim', 'ConditionalCheckFailedException', at, key);
  }

  effect(worker: string, at: number, key = KEY): this {
    this.journal.recordEffect({ key, worker, at, atCrash: false });
    return this;
  }

  complete(worker: string, at: number, key = KEY): this {
    this.journal.recordWrite(
      { worker, operation: 'complete', pk: key, succeeded: true, at },
      claimItem(key, 'done', this.#owners.get(worker) ?? '?', undefined, 'msg-001'),
    );
    return this.answer(worker, 'complete', 'ok', at, key);
  }

  /** `complete` answered with an error and changed nothing. */
  completeRefused(worker: string, at: number, answer: string, key = KEY): this {
    return this.answer(worker, 'complete', answer, at, key);
  }

  end(worker: string, fate: 'returned' | 'threw' | 'crash' | 'timeout'): this {
    this.journal.fates.set(worker, fate);
    return this;
  }

  answer(worker: string, operation: 'claim' | 'complete', answer: string, at: number, key = KEY): this {
    this.journal.recordAnswer({ worker, operation, pk: key, answer, at });
    return this;
  }

  check(options: { workload?: Workload; messages?: readonly QueueMessage[] } = {}): InvariantReport {
    return checkInvariants({
      workload: options.workload ?? workloadOf([[KEY]]),
      journal: this.journal,
      messages: options.messages ?? [message('msg-001', 'body1', 'deleted', 1)],
      quarantined: [],
      finalLedgerRanks: new Map(),
      maxReceiveCount: 3,
    });
  }
}

function claimItem(
  key: string,
  state: string,
  owner: string,
  leaseUntil: number | undefined,
  messageId: string,
) {
  return {
    pk: { S: key },
    state: { S: state },
    owner: { S: owner },
    messageId: { S: messageId },
    ...(leaseUntil === undefined ? {} : { leaseUntil: { N: String(leaseUntil) } }),
  };
}

/** `msg:<wamid>`, `st:<wamid>:<status>`, or a group send participant's `st:<wamid>:<status>:<participant>`. */
function plannedEvent(key: string): PlannedEvent {
  const [kind, wamid, status, participant] = key.split(':') as [string, string, string?, string?];
  if (kind === 'msg') {
    const message = { id: wamid, from: '16505551000', name: 'C', text: 'hi' };
    return { kind: 'message', key, message, conversation: '106540352242922:16505551000' };
  }
  const statusItem = { id: wamid, status: status as string, recipientId: '16505561000', timestamp: '1' };
  return {
    kind: 'status',
    key,
    wamid,
    status: status as string,
    ...(participant === undefined
      ? { ledger: `ledger:${wamid}` }
      : { participant, ledger: `ledger:${wamid}:${participant}` }),
    statusItem,
  };
}

/** Bodies `body1`, `body2`, … carrying these keys. */
function workloadOf(bodies: readonly (readonly string[])[]): Workload {
  const planned: PlannedBody[] = bodies.map((keys, index) => ({
    bodyId: `body${index + 1}`,
    body: '{}',
    keys,
    content: keys.map(plannedEvent),
    sendAt: 0,
    origin: 'original',
  }));
  const events = new Map(planned.flatMap((body) => body.content).map((event) => [event.key, event]));
  return { bodies: planned, events, outbound: outboundLedgers(events.values()) };
}

function message(
  messageId: string,
  bodyId: string,
  state: QueueMessage['state'],
  receiveCount: number,
): QueueMessage {
  return {
    messageId,
    body: '{}',
    bodyId,
    sentAt: 0,
    receiveCount,
    visibleAt: 0,
    latestHandle: undefined,
    state,
  };
}

const invariantsOf = (report: InvariantReport): InvariantName[] =>
  report.violations.map((violation) => violation.invariant);

describe('double effect: each extra effect needs a window opened before it, while its attempt held the claim', () => {
  it('control: an effect whose invocation crashed before complete excuses one re-run by the takeover', () => {
    const report = new Story()
      .claim('inv1', 100, 5_000)
      .effect('inv1', 200)
      .end('inv1', 'crash')
      .claim('inv2', 6_000, 12_000)
      .effect('inv2', 6_100)
      .complete('inv2', 6_200)
      .end('inv2', 'returned')
      .check();
    expect(report.violations).toEqual([]);
    expect(report.windows.map((window) => [window.worker, window.cause])).toEqual([['inv1', 'crash']]);
    expect(report.doubleEffects).toHaveLength(1);
  });

  it('control: one window excuses one re-run, not two', () => {
    const report = new Story()
      .claim('inv1', 100, 5_000)
      .effect('inv1', 200)
      .end('inv1', 'timeout')
      .claim('inv2', 6_000, 12_000)
      .effect('inv2', 6_100)
      .complete('inv2', 6_200)
      .end('inv2', 'returned')
      .claim('inv3', 13_000, 20_000)
      .effect('inv3', 13_100)
      .complete('inv3', 13_200)
      .end('inv3', 'returned')
      .check();
    expect(invariantsOf(report)).toEqual(['double-effect']);
  });

  it('(a) an effect of a key already done, by an invocation that then timed out, is a violation', () => {
    const report = new Story()
      .claim('inv1', 100, 5_000)
      .effect('inv1', 200)
      .complete('inv1', 300)
      .end('inv1', 'returned')
      .refusedClaim('inv2', 1_000, { state: 'done', worker: 'inv1' })
      .effect('inv2', 1_100)
      .end('inv2', 'timeout')
      .check();
    expect(invariantsOf(report)).toEqual(['double-effect']);
    // It timed out, but it never held the claim: no window.
    expect(report.windows.map((window) => window.cause)).toEqual(['claim-not-held']);
  });

  it('(a) a window that opened after the extra effect does not excuse it', () => {
    const report = new Story()
      .claim('inv1', 100, 5_000)
      .effect('inv1', 200)
      .complete('inv1', 300)
      .end('inv1', 'returned')
      // A claim that should have been refused (the key is done) and an effect cut short by a crash.
      .claim('inv2', 1_000, 8_000)
      .effect('inv2', 1_100)
      .end('inv2', 'crash')
      .check();
    expect(invariantsOf(report)).toEqual(['double-effect']);
    expect(report.windows.map((window) => window.cause)).toEqual(['crash']);
  });

  it('(b) an effect whose complete was refused (claim lost) excuses nothing, though its invocation then timed out', () => {
    const report = new Story()
      .claim('inv1', 100, 1_000)
      .effect('inv1', 900)
      .claim('inv2', 1_500, 9_000)
      .effect('inv2', 1_600)
      .complete('inv2', 1_700)
      .end('inv2', 'returned')
      .completeRefused('inv1', 1_800, 'ConditionalCheckFailedException')
      .end('inv1', 'timeout')
      .check();
    expect(invariantsOf(report)).toEqual(['double-effect']);
    expect(report.windows.map((window) => [window.worker, window.cause])).toEqual([['inv1', 'claim-lost']]);
  });

  it('an effect after its lease lapsed is not held, and opens no window', () => {
    const report = new Story()
      .claim('inv1', 100, 1_000)
      .effect('inv1', 1_200)
      .end('inv1', 'crash')
      .claim('inv2', 1_500, 9_000)
      .effect('inv2', 1_600)
      .complete('inv2', 1_700)
      .end('inv2', 'returned')
      .check();
    expect(invariantsOf(report)).toEqual(['double-effect']);
    expect(report.windows.map((window) => window.cause)).toEqual(['claim-not-held']);
  });

  it('a complete that failed on a transient error past its retries opens a window', () => {
    const report = new Story()
      .claim('inv1', 100, 5_000)
      .effect('inv1', 200)
      .completeRefused('inv1', 300, 'ProvisionedThroughputExceededException')
      .end('inv1', 'returned')
      .claim('inv2', 6_000, 12_000)
      .effect('inv2', 6_100)
      .complete('inv2', 6_200)
      .end('inv2', 'returned')
      .check();
    expect(report.violations).toEqual([]);
    expect(report.windows.map((window) => window.cause)).toEqual(['completion-failed']);
  });
});

describe('at least once: a key is exempt only when the DLQ answers for every message carrying it', () => {
  const workload = workloadOf([[KEY], [KEY]]);

  it('a key also carried by a message deleted after processing is checked', () => {
    const story = new Story();
    story.journal.recordReceipt({ invocation: 'inv1', messageId: 'msg-001', receiveCount: 1 });
    story.journal.recordReceipt({ invocation: 'inv2', messageId: 'msg-001', receiveCount: 2 });
    story.journal.recordReceipt({ invocation: 'inv3', messageId: 'msg-001', receiveCount: 3 });
    story.journal.recordReceipt({ invocation: 'inv4', messageId: 'msg-002', receiveCount: 1 });
    const report = story.check({
      workload,
      messages: [message('msg-001', 'body1', 'dead-letter', 3), message('msg-002', 'body2', 'deleted', 1)],
    });
    expect(report.violations).toEqual([{ invariant: 'at-least-once', detail: `${KEY} was never effected` }]);
    expect([report.eventsChecked, report.eventsExempt]).toEqual([1, 0]);
  });

  it('a deleted message that found the claim held for a dead-lettered message hands the key to the DLQ', () => {
    const story = new Story().claim('inv1', 100, 5_000, 'msg-001').end('inv1', 'timeout');
    story.journal.recordReceipt({ invocation: 'inv1', messageId: 'msg-001', receiveCount: 1 });
    story.journal.recordReceipt({ invocation: 'inv2', messageId: 'msg-002', receiveCount: 1 });
    story.refusedClaim('inv2', 200, {
      state: 'processing',
      worker: 'inv1',
      leaseUntil: 5_000,
      messageId: 'msg-001',
    });
    story.journal.recordReceipt({ invocation: 'inv3', messageId: 'msg-001', receiveCount: 2 });
    story.journal.recordReceipt({ invocation: 'inv4', messageId: 'msg-001', receiveCount: 3 });
    const report = story.check({
      workload,
      messages: [message('msg-001', 'body1', 'dead-letter', 3), message('msg-002', 'body2', 'deleted', 1)],
    });
    expect(report.violations).toEqual([]);
    expect([report.eventsChecked, report.eventsExempt, report.eventsHandedOff]).toEqual([0, 1, 1]);
  });

  it('a chain of hand-offs ending at a dead-lettered holder hands the key to the DLQ too', () => {
    const story = new Story();
    story.journal.recordReceipt({ invocation: 'inv1', messageId: 'msg-003', receiveCount: 1 });
    story.claim('inv1', 100, 5_000, 'msg-003').end('inv1', 'timeout');
    story.journal.recordReceipt({ invocation: 'inv2', messageId: 'msg-002', receiveCount: 1 });
    story.refusedClaim('inv2', 200, {
      state: 'processing',
      worker: 'inv1',
      leaseUntil: 5_000,
      messageId: 'msg-003',
    });
    story.journal.recordReceipt({ invocation: 'inv3', messageId: 'msg-001', receiveCount: 1 });
    story.claim('inv3', 6_000, 11_000, 'msg-001').end('inv3', 'timeout');
    story.journal.recordReceipt({ invocation: 'inv4', messageId: 'msg-003', receiveCount: 2 });
    story.refusedClaim('inv4', 6_100, {
      state: 'processing',
      worker: 'inv3',
      leaseUntil: 11_000,
      messageId: 'msg-001',
    });
    const chained = workloadOf([[KEY], [KEY], [KEY]]);
    const messages = [
      message('msg-001', 'body1', 'dead-letter', 1),
      message('msg-002', 'body2', 'deleted', 1),
      message('msg-003', 'body3', 'deleted', 2),
    ];
    const report = checkInvariants({ ...baseInput(story, chained, messages), maxReceiveCount: 1 });
    expect(report.violations).toEqual([]);
    expect([report.eventsChecked, report.eventsExempt, report.eventsHandedOff]).toEqual([0, 1, 1]);
    // Without the last link (msg-001 deleted too), nothing holds the event: it is checked, and lost.
    const lost = checkInvariants({
      ...baseInput(story, chained, [message('msg-001', 'body1', 'deleted', 1), ...messages.slice(1)]),
      maxReceiveCount: 1,
    });
    expect(invariantsOf(lost)).toEqual(['at-least-once']);
  });

  it('a message dead-lettered before maxReceiveCount, or at a count no invocation saw, is a violation', () => {
    const story = new Story();
    story.journal.recordReceipt({ invocation: 'inv1', messageId: 'msg-001', receiveCount: 1 });
    story.journal.recordReceipt({ invocation: 'inv2', messageId: 'msg-002', receiveCount: 1 });
    const report = story.check({
      workload,
      messages: [
        message('msg-001', 'body1', 'dead-letter', 2),
        message('msg-002', 'body2', 'dead-letter', 3),
      ],
    });
    expect(invariantsOf(report)).toEqual(['dead-letter', 'dead-letter']);
    expect([report.eventsChecked, report.eventsExempt]).toEqual([0, 1]);
  });
});

describe('ledger: every status event changes the ledger as the model of first recordings says', () => {
  const SENT = 'st:wamid.out0:sent';
  const DELIVERED = 'st:wamid.out0:delivered';
  const workload = workloadOf([[DELIVERED], [SENT]]);
  const messages = [message('msg-001', 'body1', 'deleted', 1), message('msg-002', 'body2', 'deleted', 1)];

  /** `delivered` was recorded first, then `sent` (late): sent is merged. */
  function recorded(deliveredEffected: boolean): Story {
    const story = new Story();
    const ledger = (statuses: string[], rank: number) => ({
      pk: { S: 'ledger:wamid.out0' },
      statuses: { SS: statuses },
      currentRank: { N: String(rank) },
    });
    story.journal.recordWrite(
      { worker: 'inv1', operation: 'ledger', pk: 'ledger:wamid.out0', succeeded: true, at: 100 },
      ledger(['delivered'], 2),
    );
    story.journal.recordWrite(
      { worker: 'inv2', operation: 'ledger', pk: 'ledger:wamid.out0', succeeded: true, at: 200 },
      ledger(['delivered', 'sent'], 2),
    );
    if (deliveredEffected) story.effect('inv1', 150, DELIVERED);
    return story;
  }

  it('control: delivered advanced and was effected, sent was merged and not acted on', () => {
    const story = recorded(true);
    story.journal.recordStatusCall({
      key: DELIVERED,
      worker: 'inv1',
      change: 'advanced',
      current: 'delivered',
    });
    story.journal.recordStatusCall({ key: SENT, worker: 'inv2', change: 'merged', current: 'delivered' });
    const report = checkInvariants({
      ...baseInput(story, workload, messages),
      finalLedgerRanks: new Map([['ledger:wamid.out0', 2]]),
    });
    expect(report.violations).toEqual([]);
  });

  it('a ledger that answers merged for a status that advanced loses its effect, and is caught', () => {
    // Its handler, told merged, did not act.
    const story = recorded(false);
    story.journal.recordStatusCall({
      key: DELIVERED,
      worker: 'inv1',
      change: 'merged',
      current: 'delivered',
    });
    story.journal.recordStatusCall({ key: SENT, worker: 'inv2', change: 'merged', current: 'delivered' });
    const report = checkInvariants({
      ...baseInput(story, workload, messages),
      finalLedgerRanks: new Map([['ledger:wamid.out0', 2]]),
    });
    expect(invariantsOf(report)).toEqual(['at-least-once', 'at-least-once', 'ledger-change']);
  });

  it('a ledger that answers advanced for a late status is caught', () => {
    const story = recorded(true);
    story.journal.recordStatusCall({
      key: DELIVERED,
      worker: 'inv1',
      change: 'advanced',
      current: 'delivered',
    });
    story.journal.recordStatusCall({ key: SENT, worker: 'inv2', change: 'advanced', current: 'sent' });
    const report = checkInvariants({
      ...baseInput(story, workload, messages),
      finalLedgerRanks: new Map([['ledger:wamid.out0', 2]]),
    });
    expect(invariantsOf(report)).toEqual(['ledger-change']);
  });
});

describe('ledger: a group send has one ledger per participant, named by phone number else BSUID', () => {
  const PHONE = '4915112345678';
  const BSUID = 'US.13491208655302741918';
  const BY_PHONE = `st:wamid.G:delivered:${PHONE}`;
  const BY_BSUID = `st:wamid.G:delivered:${BSUID}`;
  const workload = workloadOf([[BY_PHONE], [BY_BSUID]]);
  const messages = [message('msg-001', 'body1', 'deleted', 1), message('msg-002', 'body2', 'deleted', 1)];
  const ledgers = [`ledger:wamid.G:${PHONE}`, `ledger:wamid.G:${BSUID}`];

  /** Each participant's `delivered` recorded in its own ledger, in turn. */
  function recorded(): Story {
    const story = new Story();
    for (const [index, pk] of ledgers.entries()) {
      story.journal.recordWrite(
        { worker: `inv${index + 1}`, operation: 'ledger', pk, succeeded: true, at: 100 * (index + 1) },
        { pk: { S: pk }, statuses: { SS: ['delivered'] }, currentRank: { N: '2' } },
      );
    }
    return story;
  }

  it('control: each participant delivered advances its own ledger and is effected', () => {
    const story = recorded().effect('inv1', 150, BY_PHONE).effect('inv2', 250, BY_BSUID);
    for (const [index, key] of [BY_PHONE, BY_BSUID].entries()) {
      story.journal.recordStatusCall({
        key,
        worker: `inv${index + 1}`,
        change: 'advanced',
        current: 'delivered',
      });
    }
    const report = checkInvariants({
      ...baseInput(story, workload, messages),
      finalLedgerRanks: new Map(ledgers.map((pk) => [pk, 2])),
    });
    expect(report.violations).toEqual([]);
  });

  it('a second participant told merged, as if the message had one ledger, is caught', () => {
    const story = recorded().effect('inv1', 150, BY_PHONE);
    story.journal.recordStatusCall({
      key: BY_PHONE,
      worker: 'inv1',
      change: 'advanced',
      current: 'delivered',
    });
    story.journal.recordStatusCall({ key: BY_BSUID, worker: 'inv2', change: 'merged', current: 'delivered' });
    const report = checkInvariants({
      ...baseInput(story, workload, messages),
      finalLedgerRanks: new Map(ledgers.map((pk) => [pk, 2])),
    });
    expect(invariantsOf(report)).toEqual(['at-least-once', 'at-least-once', 'ledger-change']);
  });

  it("a participant's ledger left below the status its handler saw is caught", () => {
    const story = recorded().effect('inv1', 150, BY_PHONE).effect('inv2', 250, BY_BSUID);
    for (const [index, key] of [BY_PHONE, BY_BSUID].entries()) {
      story.journal.recordStatusCall({
        key,
        worker: `inv${index + 1}`,
        change: 'advanced',
        current: 'delivered',
      });
    }
    const report = checkInvariants({
      ...baseInput(story, workload, messages),
      finalLedgerRanks: new Map([[ledgers[0] as string, 2]]),
    });
    expect(invariantsOf(report)).toEqual(['ledger-backwards']);
  });
});

function baseInput(story: Story, workload: Workload, messages: readonly QueueMessage[]) {
  return {
    workload,
    journal: story.journal,
    messages,
    quarantined: [],
    finalLedgerRanks: new Map<string, number>(),
    maxReceiveCount: 3,
  };
}

describe("a consumer's own dead-lettering: only a record a handler gave up on, or at the lane's budget, and then handled", () => {
  const workload = workloadOf([[KEY]]);

  /**
   * `inv1` receives msg-001 (its receive `receiveCount`), its handler gives up on KEY asking for
   * `afterReceives`, and it sends the record to the status lane's DLQ: stored or not, answered so.
   */
  function gaveUp(options: {
    receiveCount: number;
    afterReceives: number;
    send?: { landed: boolean; answer: 'ok' | 'failed' | undefined };
    reportedFailed: readonly string[];
  }): Story {
    const story = new Story();
    story.journal.recordReceipt({
      invocation: 'inv1',
      messageId: 'msg-001',
      receiveCount: options.receiveCount,
    });
    story.journal.recordDeadLetterThrow({
      keys: [KEY],
      worker: 'inv1',
      reason: 'simulated',
      afterReceives: options.afterReceives,
      at: 100,
    });
    if (options.send !== undefined) {
      const send = story.journal.recordLaneDeadLetterSend({
        worker: 'inv1',
        lane: 'status',
        entries: [
          {
            messageId: 'msg-001',
            reason: 'simulated',
            groupId: undefined,
            deduplicationId: undefined,
            landed: options.send.landed,
          },
        ],
        at: 110,
      });
      if (options.send.landed) send.landedAt = 110;
      if (options.send.answer !== undefined) send.answer = options.send.answer;
    }
    story.journal.batchItemFailures.set('inv1', options.reportedFailed);
    return story.end('inv1', 'returned');
  }

  /** msg-001 as the checker sees it at the end: in the DLQ when the consumer's copy was stored. */
  const settled = (state: 'consumer' | 'deleted', receiveCount: number) =>
    state === 'consumer'
      ? { ...message('msg-001', 'body1', 'dead-letter', receiveCount), deadLetteredBy: 'consumer' as const }
      : message('msg-001', 'body1', 'deleted', receiveCount);

  it('control: given up on its second receive as asked, moved, stored and reported handled: in the DLQ', () => {
    const story = gaveUp({
      receiveCount: 2,
      afterReceives: 2,
      send: { landed: true, answer: 'ok' },
      reportedFailed: [],
    });
    const report = story.check({ workload, messages: [settled('consumer', 2)] });
    expect(report.violations).toEqual([]);
    expect([report.eventsChecked, report.eventsExempt]).toEqual([0, 1]);
  });

  it('control: a failed send that keeps the record in its lane; it comes back and is effected', () => {
    const story = gaveUp({
      receiveCount: 1,
      afterReceives: 1,
      send: { landed: false, answer: 'failed' },
      reportedFailed: ['msg-001'],
    });
    story.journal.recordReceipt({ invocation: 'inv2', messageId: 'msg-001', receiveCount: 2 });
    story.claim('inv2', 1_000, 6_000).effect('inv2', 1_100).complete('inv2', 1_200).end('inv2', 'returned');
    const report = story.check({ workload, messages: [settled('deleted', 2)] });
    expect(report.violations).toEqual([]);
  });

  it('moved before the receive the handler asked for is caught', () => {
    const story = gaveUp({
      receiveCount: 1,
      afterReceives: 3,
      send: { landed: true, answer: 'ok' },
      reportedFailed: [],
    });
    const report = story.check({ workload, messages: [settled('consumer', 1)] });
    expect(report.violations).toEqual([
      {
        invariant: 'dead-letter',
        detail:
          "inv1 moved msg-001 to the status lane's DLQ on receive 1 (simulated), but no handler of that invocation gave up on it with afterReceives ≤ 1",
      },
    ]);
  });

  it('moved without a handler giving up, before the lane’s budget, is caught', () => {
    const story = new Story();
    story.journal.recordReceipt({ invocation: 'inv1', messageId: 'msg-001', receiveCount: 2 });
    const send = story.journal.recordLaneDeadLetterSend({
      worker: 'inv1',
      lane: 'message',
      entries: [
        {
          messageId: 'msg-001',
          reason: undefined,
          groupId: undefined,
          deduplicationId: undefined,
          landed: true,
        },
      ],
      at: 110,
    });
    send.answer = 'ok';
    send.landedAt = 110;
    story.journal.batchItemFailures.set('inv1', []);
    story.end('inv1', 'returned');
    const report = checkInvariants({
      ...baseInput(story, workload, [settled('consumer', 2)]),
      consumerMaxReceives: () => 3,
    });
    expect(invariantsOf(report)).toEqual(['dead-letter']);
    // On its last receive it may.
    const last = checkInvariants({
      ...baseInput(story, workload, [settled('consumer', 2)]),
      consumerMaxReceives: () => 2,
    });
    expect(last.violations).toEqual([]);
  });

  it('a record acknowledged without its copy reaching the DLQ is lost, and caught', () => {
    // The handler gave up, and the consumer reported the record handled without sending it anywhere.
    const dropped = gaveUp({ receiveCount: 1, afterReceives: 1, reportedFailed: [] });
    expect(invariantsOf(dropped.check({ workload, messages: [settled('deleted', 1)] }))).toEqual([
      'at-least-once',
    ]);
  });

  it('a failed send whose record is reported handled is caught, stored copy or not', () => {
    const notStored = gaveUp({
      receiveCount: 1,
      afterReceives: 1,
      send: { landed: false, answer: 'failed' },
      reportedFailed: [],
    });
    expect(invariantsOf(notStored.check({ workload, messages: [settled('deleted', 1)] }))).toEqual([
      'at-least-once',
      'dead-letter',
    ]);
    // An entry refused beside a stored one: the stored copy answers for the event, the record must still come back.
    const stored = gaveUp({
      receiveCount: 1,
      afterReceives: 1,
      send: { landed: true, answer: 'failed' },
      reportedFailed: [],
    });
    expect(invariantsOf(stored.check({ workload, messages: [settled('consumer', 1)] }))).toEqual([
      'dead-letter',
    ]);
  });

  it('a record moved, then reported failed, is caught: it would run again', () => {
    const story = gaveUp({
      receiveCount: 1,
      afterReceives: 1,
      send: { landed: true, answer: 'ok' },
      reportedFailed: ['msg-001'],
    });
    expect(invariantsOf(story.check({ workload, messages: [settled('consumer', 1)] }))).toEqual([
      'dead-letter',
    ]);
  });

  it('an invocation that returns before its send was answered is caught', () => {
    const story = gaveUp({
      receiveCount: 1,
      afterReceives: 1,
      send: { landed: true, answer: undefined },
      reportedFailed: [],
    });
    expect(invariantsOf(story.check({ workload, messages: [settled('consumer', 1)] }))).toEqual([
      'dead-letter',
    ]);
  });
});
