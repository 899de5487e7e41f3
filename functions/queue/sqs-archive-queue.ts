/**
 * The archive lane's sending side: a copy of each delivery the receiver accepted or quarantined, into the
 * pipeline's archive queue, where the archiver (functions/archive) collects batches and writes them to S3.
 * The body travels as its text when SQS takes it as it is (`contentEncoding=utf8`, text-chunks.ts: Meta's
 * JSON, nearly always), else as base64 (`contentEncoding=base64`, lossless for any bytes); in chunks with
 * `archiveId`, `chunk` and `chunks` when it is larger than one message. `verdict` and `subscribers` (a JSON
 * array of names) say what the receiver did with it, `receivedAt` and `deliveryId` when and which delivery
 * it was.
 */

import type { ProofSigner } from '../commons/provenance.ts';
import { base64Messages } from './base64-chunks.ts';
import type { ArchiveCopy, ArchivePort, DeliveryMeta, QuarantineResult } from './delivery-queue-port.ts';
import { EnqueueFailedError } from './errors.ts';
import {
  ARCHIVE_CHUNK_ATTRIBUTES,
  type ArchiveAttributeName,
  commonAttributes,
  MESSAGE_ATTRIBUTES_RESERVE_BYTES,
  type MessageAttributesOf,
  type OutgoingMessage,
  proofAttribute,
  stringAttribute,
} from './outgoing-message.ts';
import { SqsBatchSender, type SqsBatchSenderOptions } from './sqs-batch-sender.ts';
import { sqsTextOf, textMessages } from './text-chunks.ts';

export interface SqsArchiveQueueOptions extends SqsBatchSenderOptions {
  readonly archiveQueueUrl: string;
  /** Proves each body archived, for `ops replay` to check (functions/commons/provenance.ts). */
  readonly proofs?: ProofSigner;
}

export class SqsArchiveQueue implements ArchivePort {
  readonly #options: SqsArchiveQueueOptions;
  readonly #sender: SqsBatchSender;

  constructor(options: SqsArchiveQueueOptions) {
    if (options.maximumMessageSizeBytes <= MESSAGE_ATTRIBUTES_RESERVE_BYTES * 2) {
      throw new RangeError(`maximumMessageSizeBytes ${options.maximumMessageSizeBytes} is too small.`);
    }
    this.#options = options;
    this.#sender = new SqsBatchSender(options);
  }

  /** `body`: the delivery's bytes, or their text as the receiver got it (the text of its UTF-8 bytes). */
  async archive(body: Uint8Array | string, copy: ArchiveCopy, meta: DeliveryMeta): Promise<QuarantineResult> {
    const proof = await this.#options.proofs?.(body);
    const messages = archiveMessages(body, copy, meta, proof, this.#options.maximumMessageSizeBytes);
    const rejected = await this.#sender.sendAll(this.#options.archiveQueueUrl, 'archive', messages, meta);
    // Text SQS takes, base64 and our own attributes hold nothing SQS refuses; a refusal is a bug or a
    // misconfigured queue.
    if (rejected.length > 0) {
      throw new EnqueueFailedError('archive', rejected.length, messages.length, rejected[0]?.code ?? '');
    }
    return { messages: messages.length };
  }
}

/** The archive queue's messages of one delivery: its text where SQS takes it, else its base64. */
export function archiveMessages(
  body: Uint8Array | string,
  copy: ArchiveCopy,
  meta: DeliveryMeta,
  proof: string | undefined,
  maximumMessageSizeBytes: number,
): OutgoingMessage[] {
  const text = sqsTextOf(body);
  const attributes = {
    ...commonAttributes(meta),
    verdict: stringAttribute(copy.verdict),
    subscribers: stringAttribute(JSON.stringify(copy.subscribers)),
    contentEncoding: stringAttribute(text === undefined ? 'base64' : 'utf8'),
    ...proofAttribute(proof),
  } satisfies MessageAttributesOf<ArchiveAttributeName>;
  return text === undefined
    ? base64Messages(bytesOf(body), attributes, maximumMessageSizeBytes, ARCHIVE_CHUNK_ATTRIBUTES)
    : textMessages(text, attributes, maximumMessageSizeBytes, ARCHIVE_CHUNK_ATTRIBUTES);
}

function bytesOf(body: Uint8Array | string): Uint8Array {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
}
