/**
 * The archive lane's sending side: a copy of each delivery the receiver accepted or quarantined, into the
 * pipeline's archive queue, where the archiver (functions/archive) collects batches and writes them to S3.
 * The body travels as base64 (lossless for any bytes), in chunks with `archiveId`, `chunk` and `chunks` when
 * it is larger than one message; `verdict` and `subscribers` (a JSON array of names) say what the receiver
 * did with it, `receivedAt` and `deliveryId` when and which delivery it was.
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
  proofAttribute,
  stringAttribute,
} from './outgoing-message.ts';
import { SqsBatchSender, type SqsBatchSenderOptions } from './sqs-batch-sender.ts';

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

  async archive(raw: Uint8Array, copy: ArchiveCopy, meta: DeliveryMeta): Promise<QuarantineResult> {
    const attributes = {
      ...commonAttributes(meta),
      verdict: stringAttribute(copy.verdict),
      subscribers: stringAttribute(JSON.stringify(copy.subscribers)),
      ...proofAttribute(await this.#options.proofs?.(raw)),
    } satisfies MessageAttributesOf<ArchiveAttributeName>;
    const messages = base64Messages(
      raw,
      attributes,
      this.#options.maximumMessageSizeBytes,
      ARCHIVE_CHUNK_ATTRIBUTES,
    );
    const rejected = await this.#sender.sendAll(this.#options.archiveQueueUrl, 'archive', messages, meta);
    // Base64 and our own attributes hold nothing SQS refuses; a refusal is a bug or a misconfigured queue.
    if (rejected.length > 0) {
      throw new EnqueueFailedError('archive', rejected.length, messages.length, rejected[0]?.code ?? '');
    }
    return { messages: messages.length };
  }
}
