import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { seededRandom } from '../../../cli/local/seeded-random.ts';
import { spawnLocalStack } from '../../../cli/local/stack/spawn-local-stack.ts';
import {
  type InboundTextMessage,
  outboundStatus,
  singleMessageBody,
  statusesBody,
} from '../../../cli/meta-traffic/webhook-bodies.ts';
import { percentile, round } from '../../../cli/tools/statistics.ts';
import { signBody } from '../../../functions/receiver/signature.ts';
import {
  type ConversationsResults,
  foldJournal,
  type HandlerRun,
  judgeOrder,
  type Sent,
  type SentPair,
  summarizeLatencies,
  waits,
} from './conversations-results.ts';
import { JOURNAL_ENV, nowMs, STATUS_HANDLER_MS_ENV, sleepText } from './journal-handlers.ts';

export interface ConversationsInput {
  /** Lone messages measured on each stack (after `warmupRuns` unmeasured ones). */
  readonly loneRuns: number;
  readonly warmupRuns: number;
  /** Pause after a lone message's handler finished, so that the next one finds idle pollers. */
  readonly loneGapMs: number;
  readonly storm: {
    readonly statuses: number;
    readonly perSec: number;
    readonly statusHandlerMs: number;
    readonly liveMessages: number;
    /** Most status POSTs awaiting an answer at once (the rate drops below `perSec` if they pile up). */
    readonly maxInFlight: number;
  };
  readonly order: {
    readonly pairs: number;
    readonly gapMs: number;
    /** A new pair starts this often. */
    readonly pairIntervalMs: number;
    readonly maxHandlerMs: number;
    readonly seed: number;
  };
  /** Longest wait for a sent message's handler to finish. */
  readonly settleTimeoutMs: number;
}

const APP_SECRET = 'bench-conversations-app-secret';
const SUBSCRIBERS_MODULE = fileURLToPath(new URL('./journal-subscribers.ts', import.meta.url));
const FLOOR_CONSUMER = 'lab/bench/conversations/pass-through-consumer.ts';
const _REPOSITORY_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const sleep = (ms: number) => new Promise((done) => setTimeout(done, Math.max(0, ms)));

/** The journal a stack's handlers append to, read incrementally. */
class JournalTail {
  readonly runs = new Map<string, HandlerRun>();
  #offset = 0;
  #partial = '';
  constructor(readonly path: string) {
    writeFileSync(path, '');
  }

  poll(): ReadonlyMap<string, HandlerRun> {
    const fd = openSync(this.path, 'r');
    try {
      const buffer = Buffer.alloc(1 << 20);
      for (;;) {
        const read = readSync(fd, buffer, 0, buffer.length, this.#offset);
        if (read === 0) break;
        this.#offset += read;
        const lines = (this.#partial + buffer.toString('utf8', 0, read)).split('\n');
        this.#partial = lines.pop() ?? '';
        foldJournal(lines, this.runs);
      }
    } finally {
      closeSync(fd);
    }
    return this.runs;
  }

  /** Waits until every key's handler finished, or the timeout. */
  async settle(keys: readonly string[], timeoutMs: number, intervalMs = 10): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const runs = this.poll();
      if (keys.every((key) => runs.get(key)?.endMs !== undefined)) return;
      await sleep(intervalMs);
    }
  }
}

interface Target {
  readonly name: string;
  readonly url: string;
  readonly journal: JournalTail;
  stop(): Promise<void>;
}

let serial = 7_000_000;
/** A text message of its own customer (or `from`), whose handler takes `handlerMs`. */
function message(handlerMs: number, from?: string): InboundTextMessage {
  const id = serial++;
  return {
    id: `wamid.bench-conversations-${id}`,
    from: from ?? `1650777${String(id % 10_000_000).padStart(7, '0')}`,
    name: `Customer ${id}`,
    text: sleepText(handlerMs),
    timestamp: String(1_749_416_383 + (id % 1_000_000)),
  };
}

async function post(url: string, body: string): Promise<number> {
  const bytes = Buffer.from(body);
  const response = await fetch(`${url}/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': signBody(bytes, APP_SECRET) },
    body: bytes,
    signal: AbortSignal.timeout(20_000),
  });
  await response.arrayBuffer();
  return response.status;
}

/** POSTs one message; the POST's start is the message's sent time. */
interface Posted extends Sent {
  readonly status: number;
  readonly answeredAtMs: number;
}

async function send(target: Target, m: InboundTextMessage): Promise<Posted> {
  const postedAtMs = nowMs();
  // A POST that failed or timed out is status 0: counted, never thrown, so the rest of the run goes on.
  const status = await post(target.url, singleMessageBody(m)).catch(() => 0);
  return { key: `msg:${m.id}`, postedAtMs, status, answeredAtMs: nowMs() };
}

/** The same waits from the POST's answer: what the queue and the consumer add once the receiver is done. */
const fromAnswer = (sent: readonly Posted[]): Sent[] =>
  sent.map(({ key, answeredAtMs }) => ({ key, postedAtMs: answeredAtMs }));

/** Lone messages, alternating between the targets (which goes first alternates too). */
async function replyLatency(
  targets: readonly [Target, Target],
  input: ConversationsInput,
  progress: (line: string) => void,
): Promise<{ waits: [number[], number[]]; afterAnswer: [number[], number[]] }> {
  const samples: [number[], number[]] = [[], []];
  const afterAnswer: [number[], number[]] = [[], []];
  for (let round = 0; round < input.warmupRuns + input.loneRuns; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    for (const index of order) {
      const target = targets[index as 0 | 1];
      const sent = await send(target, message(0));
      if (sent.status !== 200) throw new Error(`${target.name}: a lone message got ${sent.status}.`);
      await target.journal.settle([sent.key], input.settleTimeoutMs);
      const [wait] = waits([sent], target.journal.runs).waitsMs;
      if (wait === undefined) throw new Error(`${target.name}: a lone message reached no handler.`);
      if (round >= input.warmupRuns) {
        samples[index as 0 | 1].push(wait);
        afterAnswer[index as 0 | 1].push(waits(fromAnswer([sent]), target.journal.runs).waitsMs[0] as number);
      }
      await sleep(input.loneGapMs);
    }
    if (round >= input.warmupRuns && (round - input.warmupRuns) % 8 === 7) {
      progress(`conversations: ${round + 1 - input.warmupRuns} of ${input.loneRuns} lone rounds`);
    }
  }
  return { waits: samples, afterAnswer };
}

async function storm(target: Target, input: ConversationsInput) {
  const s = input.storm;
  const random = seededRandom(18);
  const started = nowMs();
  const durationMs = (s.statuses / s.perSec) * 1000;
  let non200 = 0;
  let inFlight = 0;
  const pending: Promise<void>[] = [];
  const liveAt = Array.from(
    { length: s.liveMessages },
    (_, i) => ((i + 1) / (s.liveMessages + 1)) * durationMs,
  );
  const live: Promise<Posted>[] = [];
  const statusKeys: string[] = [];
  const ackMs: number[] = [];
  for (let i = 0; i < s.statuses; i++) {
    const due = started + (i * 1000) / s.perSec;
    while (liveAt.length > 0 && started + (liveAt[0] as number) <= due) {
      liveAt.shift();
      live.push(send(target, message(0)));
    }
    await sleep(due - nowMs());
    while (inFlight >= s.maxInFlight) await sleep(1);
    const status = outboundStatus(8_000_000 + i, random);
    statusKeys.push(`st:${status.id}:${status.status}`);
    inFlight++;
    const postedAt = nowMs();
    pending.push(
      post(target.url, statusesBody([status]))
        .then((code) => {
          if (code !== 200) non200++;
          ackMs.push(nowMs() - postedAt);
        })
        .catch(() => {
          non200++;
        })
        .finally(() => {
          inFlight--;
        }),
    );
  }
  const sentMs = nowMs() - started;
  await Promise.all(pending);
  const liveAll = await Promise.all(live);
  non200 += liveAll.filter((sent) => sent.status !== 200).length;
  // Only an acknowledged message must reach its handler.
  const liveSent = liveAll.filter((sent) => sent.status === 200);
  await target.journal.settle(
    liveSent.map((sent) => sent.key),
    input.settleTimeoutMs,
  );
  const runs = target.journal.poll();
  const { waitsMs, missing } = waits(liveSent, runs);
  const afterAnswer = waits(fromAnswer(liveSent), runs).waitsMs;
  const lastLiveStart = Math.max(...liveSent.map((sent) => runs.get(sent.key)?.startMs ?? 0));
  const statusesHandledByLastLive = statusKeys.filter(
    (key) => (runs.get(key)?.startMs ?? Number.POSITIVE_INFINITY) <= lastLiveStart,
  ).length;
  return {
    waitsMs,
    missing,
    non200,
    statusesPerSec: s.statuses / (sentMs / 1000),
    statusesHandledByLastLive,
    statusAck: summarizeLatencies(ackMs),
    afterAnswer: summarizeLatencies(afterAnswer),
  };
}

async function order(target: Target, input: ConversationsInput) {
  const o = input.order;
  const random = seededRandom(o.seed);
  const handlerMs = () => Math.floor(random() * (o.maxHandlerMs + 1));
  const started = nowMs();
  const pairs: Promise<SentPair>[] = [];
  for (let i = 0; i < o.pairs; i++) {
    await sleep(started + i * o.pairIntervalMs - nowMs());
    const question = message(handlerMs());
    const followUp = message(handlerMs(), question.from);
    pairs.push(
      (async () => {
        const first = await send(target, question);
        await sleep(first.postedAtMs + o.gapMs - nowMs());
        const second = await send(target, followUp);
        if (first.status !== 200 || second.status !== 200) {
          throw new Error(`order: a pair got ${first.status} and ${second.status}.`);
        }
        return { first, second };
      })(),
    );
  }
  const sent = await Promise.all(pairs);
  await target.journal.settle(
    sent.flatMap((pair) => [pair.first.key, pair.second.key]),
    input.settleTimeoutMs,
  );
  return judgeOrder(sent, target.journal.poll());
}

export async function runConversations(
  input: ConversationsInput,
  progress: (line: string) => void,
): Promise<ConversationsResults> {
  const began = Date.now();
  const loadAverageAtStart = loadavg().map((value) => round(value, 2));
  const directory = mkdtempSync(join(tmpdir(), 'bench-conversations-'));
  const targets: Target[] = [];
  try {
    const env = (journal: string) => ({
      WHATSAPP_APP_SECRETS: APP_SECRET,
      LOCAL_SUBSCRIBERS: SUBSCRIBERS_MODULE,
      [JOURNAL_ENV]: journal,
      [STATUS_HANDLER_MS_ENV]: String(input.storm.statusHandlerMs),
    });
    const oursJournal = new JournalTail(join(directory, 'ours.journal'));
    const floorJournal = new JournalTail(join(directory, 'floor.journal'));
    progress('conversations: starting the local stack and its pass-through floor');
    const [stack, floor] = await Promise.all([
      spawnLocalStack({ env: env(oursJournal.path) }),
      spawnLocalStack({ env: { ...env(floorJournal.path), LOCAL_CONSUMER: FLOOR_CONSUMER } }),
    ]);
    const ours: Target = {
      name: 'local stack',
      url: stack.url,
      journal: oursJournal,
      stop: async () => void (await stack.stop()),
    };
    const passThrough: Target = {
      name: 'floor',
      url: floor.url,
      journal: floorJournal,
      stop: async () => void (await floor.stop()),
    };
    targets.push(ours, passThrough);
    const info = (await (await fetch(`${stack.url}/local/info`)).json()) as { subscribers?: unknown };

    const lone = await replyLatency([ours, passThrough], input, progress);
    const [oursMs, floorMs] = lone.waits;
    await passThrough.stop();
    targets.pop();
    const loneSummary = summarizeLatencies(oursMs);
    const floorSummary = summarizeLatencies(floorMs);
    progress(`conversations: lone median ${loneSummary.medianMs} ms, floor ${floorSummary.medianMs} ms`);

    const ordered = await order(ours, input);
    progress(`conversations: order ${ordered.inversions} inversions of ${ordered.judged} pairs`);

    const stormed = await storm(ours, input);
    const live = summarizeLatencies(stormed.waitsMs);
    const p99 = percentile(stormed.waitsMs, 99);
    progress(
      `conversations: storm live p99 ${round(p99, 1)} ms (${round(stormed.statusesPerSec, 1)} statuses/s)`,
    );

    return {
      replyLatency: {
        runs: input.loneRuns,
        ours: loneSummary,
        floor: floorSummary,
        ratio: round(loneSummary.medianMs / floorSummary.medianMs, 2),
        oursAfterAnswer: summarizeLatencies(lone.afterAnswer[0]),
        floorAfterAnswer: summarizeLatencies(lone.afterAnswer[1]),
      },
      storm: {
        statuses: input.storm.statuses,
        statusesPerSec: round(stormed.statusesPerSec, 1),
        targetPerSec: input.storm.perSec,
        statusHandlerMs: input.storm.statusHandlerMs,
        non200: stormed.non200,
        statusesHandledByLastLive: stormed.statusesHandledByLastLive,
        statusAckP50Ms: stormed.statusAck.medianMs,
        statusAckMaxMs: stormed.statusAck.maxMs,
        live: { ...live, p99Ms: round(p99, 1), count: stormed.waitsMs.length },
        liveMissing: stormed.missing,
        ratioToLoneMedian: round(p99 / loneSummary.medianMs, 2),
        liveAfterAnswer: stormed.afterAnswer,
      },
      order: {
        pairs: input.order.pairs,
        gapMs: input.order.gapMs,
        maxHandlerMs: input.order.maxHandlerMs,
        seed: input.order.seed,
        ...ordered,
      },
      lanes: { subscribers: info.subscribers ?? null },
      machine: {
        cpus: cpus().length,
        loadAverageAtStart,
        loadAverageAtEnd: loadavg().map((v) => round(v, 2)),
      },
      durationSeconds: round((Date.now() - began) / 1000, 1),
      finishedAt: new Date().toISOString(),
    };
  } finally {
    for (const target of targets.reverse()) await target.stop().catch(() => undefined);
    rmSync(directory, { recursive: true, force: true });
  }
}
