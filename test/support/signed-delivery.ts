/**
 * One signed POST through the receiver's own code (`receiveWebhook`), onto recording queues: what the
 * receiver answered, what each queue stored, and the metrics it counted.
 */
import type { SubscriberQueue } from '../../contract/subscribers.ts';
import { type ReceiverDependencies, receiveWebhook } from '../../functions/receiver/receive-webhook.ts';
import { signBody } from '../../functions/receiver/signature.ts';
import { RecordingQueues } from './recording-queues.ts';

const SECRET = 'secret';

export async function deliverSigned(
  body: string,
  subscribers: readonly SubscriberQueue[],
  queue = new RecordingQueues(),
): Promise<{ status: number; queue: RecordingQueues; metrics: Record<string, number> }> {
  const metrics: Record<string, number> = {};
  const deps: ReceiverDependencies = {
    secrets: { origin: 'test', load: async () => ({ appSecrets: [SECRET], verifyToken: undefined }) },
    subscribers,
    fanOut: queue,
    quarantine: queue,
    metrics: { addMetric: (name, _unit, value) => (metrics[name] = (metrics[name] ?? 0) + value) },
    logger: { info: () => {}, warn: () => {}, error: () => {} },
  };
  const response = await receiveWebhook(
    {
      method: 'POST',
      path: '/webhook',
      query: {},
      headers: { 'x-hub-signature-256': signBody(body, SECRET) },
      body,
      requestId: 'req-1',
    },
    deps,
  );
  return { status: response.statusCode, queue, metrics };
}
