/**
 * The pipeline's quarantine queue, written directly: the receiver and every subscriber's consumer quarantine
 * bodies there through this class, so that a quarantined body looks the same whichever side put it there.
 * (A subscriber's own DLQ is filled by SQS redrive only.)
 */
import type { ProofSigner } from '../commons/provenance.ts';
import { base64Messages } from './base64-chunks.ts';
import type { ChunkAttributeNames } from './chunked-body.ts';
import type {
  DeliveryMeta,
  QuarantinePort,
  QuarantineReason,
  QuarantineResult,
} from './delivery-queue-port.ts';
import { EnqueueFailedError } from './errors.ts';
import {
  commonAttributes,
  MESSAGE_ATTRIBUTES_RESERVE_BYTES,
  type MessageAttributesOf,
  proofAttribute,
  type QuarantineAttributeName,
  stringAttribute,
} from './outgoing-message.ts';
import { SqsBatchSender, type SqsBatchSenderOptions } from './sqs-batch-sender.ts';

const CHUNK_ATTRIBUTES = {
  id: 'quarantineId',
  chunk: 'chunk',
  chunks: 'chunks',
} as const satisfies ChunkAttributeNames & Record<string, QuarantineAttributeName>;

export interface SqsQuarantineQueueOptions extends SqsBatchSenderOptions {
  /** The quarantine queue's URL. */
  readonly quarantineQueueUrl: string;
  /**
   * The receiver's: proves each body it keeps (functions/commons/provenance.ts). Without it (a consumer), the
   * proof given in the delivery meta, if any, is kept.
   */
  readonly proofs?: ProofSigner;
}

export class SqsQuarantineQueue implements QuarantinePort {
  readonly #options: SqsQuarantineQueueOptions;
  readonly #sender: SqsBatchSender;

  constructor(options: SqsQuarantineQueueOptions) {
    if (options.maximumMessageSizeBytes <= MESSAGE_ATTRIBUTES_RESERVE_BYTES * 2) {
      throw new RangeError(`maximumMessageSizeBytes ${options.maximumMessageSizeBytes} is too small.`);
    }
    this.#options = options;
    this.#sender = new SqsBatchSender(options);
  }

  /**
   * Body: the base64 of the raw bytes, lossless for any bytes (SQS refuses some characters and all invalid
   * UTF-8). Attributes: `reason`, `contentEncoding=base64`, `receivedAt`, `deliveryId`; a body too large for
   * one message is cut into chunks of the base64 text with `quarantineId`, `chunk` (1-based) and `chunks`:
   * concatenate the chunks in order, then decode.
   */
  async quarantine(raw: Uint8Array, reason: QuarantineReason, meta: DeliveryMeta): Promise<QuarantineResult> {
    const proof = this.#options.proofs === undefined ? meta.proof : await this.#options.proofs(raw);
    const attributes = {
      ...commonAttributes(meta),
      reason: stringAttribute(reason),
      contentEncoding: stringAttribute('base64'),
      ...proofAttribute(proof),
    } satisfies MessageAttributesOf<QuarantineAttributeName>;
    const messages = base64Messages(raw, attributes, this.#options.maximumMessageSizeBytes, CHUNK_ATTRIBUTES);
    const rejected = await this.#sender.sendAll(
      this.#options.quarantineQueueUrl,
      'quarantine',
      messages,
      meta,
    );
    if (rejected.length > 0) {
      throw new EnqueueFailedError('quarantine', rejected.length, messages.length, rejected[0]?.code ?? '');
    }
    return { messages: messages.length };
  }
}
