/**
 * What Meta's subscriptions say against the stack (`meta status`): pure, over what the Graph API answered.
 * Every difference is one finding; none means Meta delivers every field the subscribers want to the stack.
 */
import type { AppSubscription, SubscribedApp } from './meta-subscriptions.ts';

export interface WabaSubscriptions {
  readonly wabaId: string;
  readonly apps: readonly SubscribedApp[];
}

export type Finding =
  | { readonly kind: 'app-not-subscribed' }
  | { readonly kind: 'app-inactive' }
  | { readonly kind: 'callback-url'; readonly metaUrl: string | undefined }
  | { readonly kind: 'missing-fields'; readonly fields: readonly string[] }
  | { readonly kind: 'extra-fields'; readonly fields: readonly string[] }
  | { readonly kind: 'waba-not-subscribed'; readonly wabaId: string }
  | { readonly kind: 'override-elsewhere'; readonly wabaId: string; readonly overrideUrl: string };

export function checkSubscriptions(expected: {
  readonly appId: string;
  readonly webhookUrl: string;
  readonly fields: readonly string[];
  readonly app: AppSubscription | undefined;
  readonly wabas: readonly WabaSubscriptions[];
}): Finding[] {
  const findings: Finding[] = [];
  const { app } = expected;
  if (app === undefined) findings.push({ kind: 'app-not-subscribed' });
  else {
    if (!app.active) findings.push({ kind: 'app-inactive' });
    if (app.callbackUrl !== expected.webhookUrl)
      findings.push({ kind: 'callback-url', metaUrl: app.callbackUrl });
    const missing = expected.fields.filter((field) => !app.fields.includes(field));
    const extra = app.fields.filter((field) => !expected.fields.includes(field));
    if (missing.length > 0) findings.push({ kind: 'missing-fields', fields: missing });
    if (extra.length > 0) findings.push({ kind: 'extra-fields', fields: extra });
  }
  for (const waba of expected.wabas) {
    const ours = waba.apps.find((subscribed) => subscribed.appId === expected.appId);
    if (ours === undefined) findings.push({ kind: 'waba-not-subscribed', wabaId: waba.wabaId });
    else if (ours.overrideCallbackUri !== undefined && ours.overrideCallbackUri !== expected.webhookUrl) {
      findings.push({
        kind: 'override-elsewhere',
        wabaId: waba.wabaId,
        overrideUrl: ours.overrideCallbackUri,
      });
    }
  }
  return findings;
}

/** One line per finding, saying what Meta does because of it. */
export function describeFinding(finding: Finding, webhookUrl: string): string {
  switch (finding.kind) {
    case 'app-not-subscribed':
      return 'the app has no whatsapp_business_account subscription: Meta sends it no webhook (run meta subscribe)';
    case 'app-inactive':
      return 'the app subscription is not active: Meta sends nothing until it is';
    case 'callback-url':
      return `the app's callback URL is ${finding.metaUrl ?? '(none)'}, not the stack's ${webhookUrl}`;
    case 'missing-fields':
      return `fields the subscribers want but the app is not subscribed to: ${finding.fields.join(', ')}`;
    case 'extra-fields':
      return `fields the app is subscribed to but no subscriber wants (delivered, acknowledged, unused): ${finding.fields.join(', ')}`;
    case 'waba-not-subscribed':
      return `WABA ${finding.wabaId} has not subscribed the app: its events never reach the webhook`;
    case 'override-elsewhere':
      return `WABA ${finding.wabaId} overrides the callback with ${finding.overrideUrl}: its messages go there, not to the stack`;
  }
}
