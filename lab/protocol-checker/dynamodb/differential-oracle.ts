/**
 * Sends one raw request to DynamoDB Local and to the model and reduces both answers to what a caller can
 * observe: the returned attributes or item, or the error's name and, for a failed condition, its `Item`.
 * Sets compare without order (DynamoDB promises none), binaries as hex, numbers by value: DynamoDB trims
 * leading and trailing zeroes (developer guide, "Data types"), and so does the model, but DynamoDB Local
 * trims only the top-level numbers of a PutItem: it keeps `1.50` as written in lists, maps and UpdateItem
 * values, and adds 0.25 + 0.25 into `0.50`.
 */
import {
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { AttributeValue, RawItem } from './attribute-value.ts';
import { canonicalNumber } from './decimal-number.ts';
import type { RawRequest } from './differential-requests.ts';
import type { DynamoDbModel } from './dynamodb-model.ts';

export type Answer =
  | { readonly ok: true; readonly attributes?: unknown; readonly item?: unknown }
  | { readonly ok: false; readonly error: string; readonly item?: unknown; readonly message?: string };

// biome-ignore lint/suspicious/noExplicitAny: each command takes its own input type; the request is raw.
type AnyInput = any;

export async function localAnswer(client: DynamoDBClient, request: RawRequest): Promise<Answer> {
  const input: AnyInput = request.input;
  try {
    switch (request.commandName) {
      case 'PutItemCommand':
        return answerOf(await client.send(new PutItemCommand(input)));
      case 'UpdateItemCommand':
        return answerOf(await client.send(new UpdateItemCommand(input)));
      case 'DeleteItemCommand':
        return answerOf(await client.send(new DeleteItemCommand(input)));
      default:
        return answerOf(await client.send(new GetItemCommand(input)));
    }
  } catch (error) {
    return errorAnswer(error);
  }
}

export function modelAnswer(model: DynamoDbModel, request: RawRequest): Answer {
  try {
    return answerOf(model.execute(request.commandName, request.input));
  } catch (error) {
    return errorAnswer(error);
  }
}

/** The answer of a request the caller already ran: its output, or the error it threw. */
export function answerOfOutcome(outcome: { output: Record<string, unknown> } | { error: unknown }): Answer {
  return 'output' in outcome ? answerOf(outcome.output) : errorAnswer(outcome.error);
}

/** The parts both sides must agree on (the error message is kept for reports, not compared). */
export function comparable(answer: Answer): Answer {
  if (answer.ok) return answer;
  const { message: _message, ...rest } = answer;
  return rest;
}

function answerOf(raw: object): Answer {
  const output = raw as { Attributes?: RawItem; Item?: RawItem };
  return {
    ok: true,
    ...(output.Attributes === undefined ? {} : { attributes: normalizedItem(output.Attributes) }),
    ...(output.Item === undefined ? {} : { item: normalizedItem(output.Item) }),
  };
}

function errorAnswer(error: unknown): Answer {
  if (!(error instanceof Error)) throw error;
  const item = (error as { Item?: RawItem }).Item;
  return {
    ok: false,
    error: error.name,
    message: error.message,
    ...(item === undefined ? {} : { item: normalizedItem(item) }),
  };
}

export function normalizedItem(item: RawItem): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(item)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, value]) => [name, normalizedValue(value)]),
  );
}

function normalizedValue(value: AttributeValue): unknown {
  if (value.B !== undefined) return { B: Buffer.from(value.B).toString('hex') };
  if (value.SS !== undefined) return { SS: [...value.SS].sort() };
  if (value.N !== undefined) return { N: canonicalNumber(value.N) };
  if (value.NS !== undefined) return { NS: value.NS.map(canonicalNumber).sort() };
  if (value.BS !== undefined)
    return { BS: value.BS.map((bytes) => Buffer.from(bytes).toString('hex')).sort() };
  if (value.L !== undefined) return { L: value.L.map(normalizedValue) };
  if (value.M !== undefined) return { M: normalizedItem(value.M) };
  return value;
}
