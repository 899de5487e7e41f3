import { signBody } from '../../../functions/receiver/signature.ts';
import type { StatsSnapshot } from '../../../local/observe/pipeline-stats.ts';
import type { EffectsView } from '../../../local/stack/effects-journal.ts';

/** HTTP in, `/local/*` out: everything the end-to-end tests know about the stack. */
export class StackClient {
  constructor(readonly url: string) {}

  async post(
    body: string | Uint8Array,
    secret: string,
    headers: Record<string, string> = {},
  ): Promise<number> {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    const response = await fetch(`${this.url}/webhook`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-hub-signature-256': signBody(bytes, secret),
        ...headers,
      },
      body: bytes,
    });
    await response.arrayBuffer();
    return response.status;
  }

  async get<T>(path: string): Promise<{ status: number; body: T }> {
    const response = await fetch(`${this.url}${path}`);
    const text = await response.text();
    return { status: response.status, body: (text.startsWith('{') ? JSON.parse(text) : text) as T };
  }

  async drained(timeoutMs = 60_000): Promise<void> {
    const { status } = await this.get(`/local/drained?timeoutMs=${timeoutMs}`);
    if (status !== 200) throw new Error(`The local stack's queue did not drain within ${timeoutMs} ms.`);
  }

  /** Effect counts of the given keys (0 for a key never effected), once the queue has drained. */
  async effectCounts(keys: readonly string[], drainTimeoutMs?: number): Promise<Record<string, number>> {
    await this.drained(drainTimeoutMs);
    const { body } = await this.get<EffectsView>('/local/effects');
    const counts = new Map(body.effects.map((e) => [e.key, e.count]));
    return Object.fromEntries(keys.map((key) => [key, counts.get(key) ?? 0]));
  }

  async stats(): Promise<StatsSnapshot> {
    return (await this.get<StatsSnapshot>('/local/stats')).body;
  }
}

/** A `messages` change with inbound messages, as Meta sends it. */
export function messagesChange(wamids: readonly string[], textLength = 8) {
  return {
    field: 'messages',
    value: {
      messaging_product: 'whatsapp',
      metadata: { display_phone_number: '15550000000', phone_number_id: '200000000000001' },
      contacts: [{ profile: { name: 'E2E Customer' }, wa_id: '15551230000' }],
      messages: wamids.map((id, i) => ({
        from: '15551230000',
        id,
        timestamp: String(1_780_000_000 + i),
        type: 'text',
        text: { body: `hello ${i} `.padEnd(textLength, '.') },
      })),
    },
  };
}

export function statusChange(wamid: string, status: string, timestamp: number) {
  return {
    field: 'messages',
    value: {
      messaging_product: 'whatsapp',
      metadata: { display_phone_number: '15550000000', phone_number_id: '200000000000001' },
      statuses: [{ id: wamid, status, timestamp: String(timestamp), recipient_id: '15551230000' }],
    },
  };
}

export function envelope(...changes: unknown[]): string {
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [{ id: '100000000000001', time: 1_780_000_000, changes }],
  });
}

/** Wamids unique to one test run, so that nothing from another test can be mistaken for them. */
export function wamidFactory(prefix: string): (n: number) => string {
  const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  return (n) => `wamid.E2E.${prefix}.${run}.${n}`;
}
