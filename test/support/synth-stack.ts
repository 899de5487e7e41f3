/**
 * Helpers shared by the infrastructure tests: build the stack once per test file and read the template.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import {
  WhatsAppWebhookDedupStack,
  type WhatsAppWebhookDedupStackProps,
} from '../../lib/whatsapp-webhook-dedup-stack.ts';

/**
 * Timeout for a test that synthesises inside its body. Synthesis takes a few seconds alone, but CI machines
 * running other suites in parallel have been seen to take 30 s (the vitest default).
 */
export const SYNTH_TIMEOUT_MS = 120_000;

export interface SynthOptions {
  /**
   * Run esbuild for both functions. Only the test that checks the bundles needs it; the others skip it
   * (CDK's `aws:cdk:bundling-stacks` context) because bundling does not change the template's properties.
   */
  readonly bundle?: boolean;
}

export function synthStack(
  props: WhatsAppWebhookDedupStackProps = {},
  options: SynthOptions = {},
): { app: App; stack: WhatsAppWebhookDedupStack; template: Template } {
  const app = new App({
    context: options.bundle
      ? // Records each function's bundle directory in the template (as the CLI does), for the bundle checks.
        { 'aws:cdk:enable-asset-metadata': true }
      : { 'aws:cdk:bundling-stacks': [] },
  });
  const stack = new WhatsAppWebhookDedupStack(app, 'TestStack', props);
  return { app, stack, template: Template.fromStack(stack) };
}

export interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Sid?: string;
}

export function actionsOf(statement: Statement): string[] {
  return Array.isArray(statement.Action) ? statement.Action : [statement.Action];
}

/** Every statement of every identity policy in the template, with the logical id of its policy. */
export function identityStatements(template: Template): Array<{ policy: string; statement: Statement }> {
  const found: Array<{ policy: string; statement: Statement }> = [];
  for (const [id, resource] of Object.entries(template.findResources('AWS::IAM::Policy'))) {
    for (const statement of resource.Properties.PolicyDocument.Statement as Statement[]) {
      found.push({ policy: id, statement });
    }
  }
  for (const [id, resource] of Object.entries(template.findResources('AWS::IAM::Role'))) {
    for (const inline of (resource.Properties.Policies ?? []) as Array<{
      PolicyDocument: { Statement: Statement[] };
    }>) {
      for (const statement of inline.PolicyDocument.Statement) found.push({ policy: id, statement });
    }
  }
  return found;
}

/** Statements of the identity policy attached to the role whose logical id starts with `rolePrefix`. */
export function statementsOfRole(template: Template, rolePrefix: string): Statement[] {
  const policies = template.findResources('AWS::IAM::Policy');
  const statements: Statement[] = [];
  for (const resource of Object.values(policies)) {
    const roles = resource.Properties.Roles as Array<{ Ref: string }>;
    if (roles.some((role) => role.Ref.startsWith(rolePrefix))) {
      statements.push(...(resource.Properties.PolicyDocument.Statement as Statement[]));
    }
  }
  return statements;
}

export function logicalIdStartingWith(template: Template, type: string, prefix: string): string {
  const ids = Object.keys(template.findResources(type)).filter((id) => id.startsWith(prefix));
  if (ids.length !== 1)
    throw new Error(`Expected one ${type} starting with ${prefix}, found ${ids.join(', ')}`);
  return ids[0] as string;
}
