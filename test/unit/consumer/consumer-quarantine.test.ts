import { describe, expect, it } from 'vitest';
import { createConsumerQuarantine } from '../../../functions/consumer/consumer-quarantine.ts';
import type { DeliveryMeta, QuarantinePort } from '../../../functions/queue/delivery-queue-port.ts';

function recordingPort() {
  const kept: { raw: string; reason: string; meta: DeliveryMeta }[] = [];
  const port: QuarantinePort = {
    async quarantine(raw, reason, meta) {
      kept.push({ raw: Buffer.from(raw).toString('utf8'), reason, meta });
      return { messages: 1 };
    },
  };
  return { port, kept };
}

describe('the consumer’s quarantine', () => {
  it('passes on the proof the receiver gave the record: the consumer holds no key to make one', async () => {
    const { port, kept } = recordingPort();
    const quarantine = createConsumerQuarantine(port, () => 1_000);
    await quarantine(
      {
        messageId: 'm1',
        body: '{"object":"whatsapp_business_account","entry":[]}',
        messageAttributes: { proof: { dataType: 'String', stringValue: 'v1=abc' } },
      },
      'event-without-id',
    );
    expect(kept).toEqual([
      {
        raw: '{"object":"whatsapp_business_account","entry":[]}',
        reason: 'event-without-id',
        meta: {
          deliveryId: 'm1',
          receivedAt: new Date(1_000).toISOString(),
          retryDeadline: 4_000,
          proof: 'v1=abc',
        },
      },
    ]);
  });

  it('keeps a record without a proof without one', async () => {
    const { port, kept } = recordingPort();
    await createConsumerQuarantine(port)({ messageId: 'm2', body: 'x' }, 'invalid-json');
    expect(kept[0]?.meta).not.toHaveProperty('proof');
  });
});
