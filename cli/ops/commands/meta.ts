/**
 * `meta subscribe` and `meta status`: connect the Meta app (and its WhatsApp Business Accounts) to the
 * deployed webhook, and say where Meta's subscriptions differ from the stack. The callback URL and verify
 * token come from the stack (its `WebhookUrl` output and its secret), the fields from its subscribers (the
 * union of what they want). The access token is read at run time and never printed (docs/operations.md).
 */
import {
  WHATSAPP_WEBHOOK_FIELDS,
  wantedWebhookFields,
} from 'whatsapp-webhook-dedup/contract/meta-webhook-fields';
import { OpsError } from '../errors.ts';
import { GraphClient } from '../meta/graph-client.ts';
import { GraphApiError } from '../meta/graph-errors.ts';
import type { MetaOptions } from '../meta/meta-arguments.ts';
import { MetaSubscriptions } from '../meta/meta-subscriptions.ts';
import { checkSubscriptions, describeFinding, type WabaSubscriptions } from '../meta/subscription-check.ts';
import { labelled } from '../output.ts';
import { type Deployment, type DeploymentChoice, resolveDeployment } from '../target/deployment.ts';
import type { CommandContext } from './command-context.ts';

export interface MetaDependencies {
  readonly resolveDeployment?: (choice: DeploymentChoice) => Promise<Deployment>;
  /** Where an `environment` token is read. @default process.env */
  readonly env?: NodeJS.ProcessEnv;
}

export function metaSubscribeCommand(
  context: CommandContext,
  options: MetaOptions,
  dependencies: MetaDependencies = {},
): Promise<void> {
  return withDeployment(options, dependencies, async (deployment, subscriptions) => {
    const { verifyToken } = await deployment.webhookSecrets();
    if (verifyToken === undefined) {
      throw new OpsError(
        `${deployment.description} has no verify token in its secret: store one (docs/deploy.md), since Meta's verification GET must be answered with it`,
      );
    }
    const wanted = wantedFields(context);
    const offered: readonly string[] = WHATSAPP_WEBHOOK_FIELDS;
    const unknown = wanted.filter((field) => !offered.includes(field));
    if (options.fields === undefined && unknown.length > 0) {
      throw new OpsError(
        `the subscribers want ${unknown.join(', ')}, which Meta does not offer for whatsapp_business_account (contract/meta-webhook-fields.ts): fix their fields, or give --fields`,
      );
    }
    const fields = options.fields ?? wanted;
    const leftOut = wanted.filter((field) => !fields.includes(field));
    if (leftOut.length > 0) {
      context.output.progress(`meta: --fields leaves out fields the subscribers want: ${leftOut.join(', ')}`);
    }
    const callbackUrl = deployment.webhookUrl;
    await explainingVerification(callbackUrl, () =>
      subscriptions.subscribeApp(options.appId, { callbackUrl, verifyToken, fields }),
    );
    context.output.record('meta subscribe', { appId: options.appId, callbackUrl, fields });
    for (const wabaId of options.wabaIds) {
      await explainingVerification(callbackUrl, () =>
        subscriptions.subscribeWaba(wabaId, options.override ? { callbackUrl, verifyToken } : undefined),
      );
      context.output.record('meta subscribe waba', {
        appId: options.appId,
        wabaId,
        override: options.override,
      });
    }
    context.output.result(
      {
        appId: options.appId,
        callbackUrl,
        fields,
        wabas: options.wabaIds.map((wabaId) => ({
          wabaId,
          overrideCallbackUri: options.override ? callbackUrl : undefined,
        })),
        graphVersion: options.graph.version,
      },
      [
        ...labelled([
          [
            'app',
            `${options.appId} subscribed to whatsapp_business_account (Graph ${options.graph.version})`,
          ],
          ['callback URL', callbackUrl],
          ['fields', fields.join(', ')],
          ...options.wabaIds.map(
            (wabaId) =>
              [
                `WABA ${wabaId}`,
                options.override ? `subscribed, callback overridden to the stack` : 'subscribed',
              ] as const,
          ),
        ]),
      ],
    );
  });
}

export function metaStatusCommand(
  context: CommandContext,
  options: MetaOptions,
  dependencies: MetaDependencies = {},
): Promise<void> {
  return withDeployment(options, dependencies, async (deployment, subscriptions) => {
    const fields = wantedFields(context);
    const app = await subscriptions.appSubscription(options.appId);
    const wabas: WabaSubscriptions[] = [];
    for (const wabaId of options.wabaIds) {
      wabas.push({ wabaId, apps: await subscriptions.subscribedApps(wabaId) });
    }
    const webhookUrl = deployment.webhookUrl;
    const findings = checkSubscriptions({ appId: options.appId, webhookUrl, fields, app, wabas });
    const texts = findings.map((finding) => describeFinding(finding, webhookUrl));
    context.output.result(
      {
        ok: findings.length === 0,
        appId: options.appId,
        webhookUrl,
        wantedFields: fields,
        app: app ?? null,
        wabas,
        findings: findings.map((finding, index) => ({ ...finding, text: texts[index] })),
        graphVersion: options.graph.version,
      },
      [
        ...labelled([
          ['stack', `${deployment.description}, ${webhookUrl}`],
          [
            'app',
            app === undefined
              ? `${options.appId}: not subscribed`
              : `${options.appId}: ${app.callbackUrl ?? '(no URL)'}${app.active ? '' : ' (inactive)'}`,
          ],
          ['app fields', app?.fields.join(', ')],
          ['wanted fields', fields.join(', ')],
          ...wabas.map((waba) => {
            const ours = waba.apps.find((subscribed) => subscribed.appId === options.appId);
            return [
              `WABA ${waba.wabaId}`,
              ours === undefined
                ? 'app not subscribed'
                : `app subscribed${ours.overrideCallbackUri === undefined ? '' : `, override ${ours.overrideCallbackUri}`}`,
            ] as const;
          }),
        ]),
        findings.length === 0 ? 'matches the stack' : `${findings.length} difference(s):`,
        ...texts.map((text) => `  - ${text}`),
      ],
    );
    if (findings.length > 0) {
      throw new OpsError(
        `${findings.length} difference(s) between Meta's subscriptions and the stack: ${texts[0]}`,
      );
    }
  });
}

async function withDeployment(
  options: MetaOptions,
  dependencies: MetaDependencies,
  run: (deployment: Deployment, subscriptions: MetaSubscriptions) => Promise<void>,
): Promise<void> {
  const deployment = await (dependencies.resolveDeployment ?? resolveDeployment)({
    kind: 'stack',
    stackName: options.stackName,
  });
  try {
    const accessToken = await readAccessToken(options, deployment, dependencies.env ?? process.env);
    const graph = new GraphClient({
      baseUrl: options.graph.baseUrl,
      version: options.graph.version,
      accessToken,
    });
    await run(deployment, new MetaSubscriptions(graph));
  } catch (error) {
    if (error instanceof GraphApiError) throw new OpsError(error.message);
    throw error;
  } finally {
    deployment.close();
  }
}

async function readAccessToken(
  options: MetaOptions,
  deployment: Deployment,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const { token } = options;
  if (token.kind === 'environment') {
    const value = (env[token.variable] ?? '').trim();
    if (value === '') throw new OpsError(`${token.variable} is empty: set the Meta access token there`);
    return value;
  }
  if (deployment.accessTokenFromSecret === undefined) {
    throw new OpsError('--token-secret needs a deployed stack (Secrets Manager)');
  }
  return deployment.accessTokenFromSecret(token.secretName);
}

/** The union of what the target's subscribers want (every field for one without a filter). */
function wantedFields(context: CommandContext): string[] {
  return wantedWebhookFields(context.target.subscribers.map((subscriber) => subscriber.fields));
}

/**
 * Subscribing makes Meta send its verification GET to the callback at once; when that fails, the stack is
 * not answering the handshake yet (not deployed, no verify token stored, or a different one typed).
 */
async function explainingVerification(callbackUrl: string, call: () => Promise<void>): Promise<void> {
  try {
    await call();
  } catch (error) {
    if (error instanceof GraphApiError && error.callbackVerificationFailed) {
      throw new OpsError(
        `${error.message}. Meta subscribes a callback only once it answers the verification GET: the stack must answer the handshake first. Check it with curl -s "${callbackUrl}?hub.mode=subscribe&hub.verify_token=$VERIFY_TOKEN&hub.challenge=42" (it prints 42 when it works; VERIFY_TOKEN is the verifyToken in the secret of the WebhookSecretName output)`,
      );
    }
    throw error;
  }
}
