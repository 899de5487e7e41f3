/** `LOCAL_CONSUMER`: the local stack can run another consumer module in every lane (the bench's floor). */
import { describe, expect, it } from 'vitest';
import { defineWebhookHandlers } from '../../../../functions/consumer/handler-api.ts';
import { sqsEvent } from '../../../../test/support/consumer-harness.ts';
import { createLambdaContext } from '../../../local/lambda-context.ts';
import { createLocalConsumer, SubscriberModuleError } from '../../../local/stack/consumer-runtime.ts';
import { readLocalConfig } from '../../../local/stack/local-config.ts';
import { projectModules } from '../../../local/stack/project-modules.ts';
import { messagesBody } from '../../../meta-traffic/webhook-bodies.ts';

const ROOT = new URL('../../../../', import.meta.url).pathname;
const compiled = (path: string) => ({ path, import: () => projectModules(ROOT).import(path) });

describe('LOCAL_CONSUMER', () => {
  it('is read from the environment, absent by default', () => {
    expect(readLocalConfig({}).consumerModule).toBeUndefined();
    expect(
      readLocalConfig({ LOCAL_CONSUMER: 'lab/bench/conversations/pass-through-consumer.ts' }).consumerModule,
    ).toBe('lab/bench/conversations/pass-through-consumer.ts');
  });

  it('runs the named module’s consumer over the lane’s handlers instead of the real one', async () => {
    const keys: string[] = [];
    const consume = await createLocalConsumer(
      defineWebhookHandlers({ onMessage: ({ key }) => void keys.push(key) }),
      {},
      compiled('lab/bench/conversations/pass-through-consumer.ts'),
    );
    const event = sqsEvent(['r1', messagesBody([{ id: 'wamid.hook', from: '1555', text: 'hi' } as never])]);
    const context = createLambdaContext({
      functionName: 'c',
      region: 'us-east-1',
      deadlineMs: Date.now() + 5_000,
    });
    await expect(consume(event, context)).resolves.toEqual({ batchItemFailures: [] });
    expect(keys).toEqual(['msg:wamid.hook']);
  });

  it('refuses a module without createConsumer, naming it', async () => {
    await expect(
      createLocalConsumer(defineWebhookHandlers({}), {}, compiled('cli/local/stack/local-config.ts')),
    ).rejects.toThrow(SubscriberModuleError);
  });
});
