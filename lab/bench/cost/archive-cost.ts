/**
 * What the delivery archive costs per million deliveries (docs/cost.md, "The delivery archive";
 * docs/design.md §9), from the price table: the archive queue's requests (the receiver's send, the archiver's
 * receives and deletes), the archiver's Lambda time, its batched PUTs, and the objects' storage for the
 * default retention. A PUT holds one batch (one per batching window at a steady rate, up to the batch size or
 * Lambda's 6 MB payload) and hour, so the PUTs depend on the delivery rate: the table gives three.
 */

import { PRICES } from '../../../cli/cost/prices.ts';
import { MILLION } from '../../../cli/cost/stack-cost.ts';
import { DEFAULT_ARCHIVE_RETENTION_DAYS } from '../../../contract/archive.ts';
import {
  ARCHIVER_BATCH_SIZE,
  ARCHIVER_BATCHING_WINDOW_SECONDS,
} from '../../../contract/archiver-settings.ts';
import { ARCHIVER_MEMORY_MB } from '../../../lib/builders/archive.ts';

/** Assumed, each with its reason; everything else is the construct's settings and the price table. */
export const ARCHIVE_ASSUMPTIONS = {
  /** A delivery's body: one message or status webhook, minified as Meta sends it (1–2 KB). */
  bodyBytes: 1_500,
  /**
   * The archive message's attributes (receivedAt, deliveryId, verdict, subscribers, contentEncoding), as SQS
   * counts them. The body travels as its text (Meta's JSON is UTF-8 SQS takes as it is), so as many bytes.
   */
  attributeBytes: 175,
  /** A line's fields around the body (v, deliveryId, arrivedAt, verdict, subscribers, encoding, escapes). */
  lineOverheadBytes: 200,
  /** gzip keeps about a third of JSON webhook text (distinct ids and texts; repeated keys and metadata). */
  gzipShare: 0.35,
  /**
   * Archiver time: decoding, encoding and compressing a delivery (0.045 ms measured on the bench machine by
   * archiveBatch over 2,000 fixture deliveries, doubled for a 512 MB Lambda's share of a vCPU), and per
   * invocation the PUT's round trip and the handler's own work.
   */
  archiverMsPerDelivery: 0.1,
  archiverMsPerInvocation: 40,
  /** ReceiveMessage and DeleteMessageBatch each take up to 10 messages. */
  messagesPerReceiveOrDelete: 10,
} as const;

/** Lambda's invocation payload limit for an SQS batch. */
const LAMBDA_PAYLOAD_BYTES = 6 * 1024 * 1024;
const GIB = 1024 ** 3;
const DAYS_PER_MONTH = 365.25 / 12;

/** Deliveries per second the table is computed for. */
export const ARCHIVE_RATES_PER_SECOND = [1, 10, 100] as const;

export interface ArchiveCost {
  readonly ratePerSecond: number;
  /** Deliveries in one archive object. */
  readonly deliveriesPerObject: number;
  readonly puts: number;
  readonly storage: number;
  readonly sqs: number;
  readonly archiver: number;
  readonly total: number;
}

/** Dollars per million deliveries at a steady `ratePerSecond`, kept `retentionDays`. */
export function archiveCostPerMillion(
  ratePerSecond: number,
  retentionDays: number = DEFAULT_ARCHIVE_RETENTION_DAYS,
): ArchiveCost {
  const a = ARCHIVE_ASSUMPTIONS;
  const messageBytes = a.bodyBytes + a.attributeBytes;
  const deliveriesPerObject = Math.max(
    1,
    Math.floor(
      Math.min(
        ARCHIVER_BATCH_SIZE,
        ratePerSecond * ARCHIVER_BATCHING_WINDOW_SECONDS,
        LAMBDA_PAYLOAD_BYTES / messageBytes,
      ),
    ),
  );
  const objects = MILLION / deliveriesPerObject;
  const puts = objects * PRICES.s3.perPutRequest;
  const storedGb = (MILLION * (a.bodyBytes + a.lineOverheadBytes) * a.gzipShare) / GIB;
  const storage = storedGb * (retentionDays / DAYS_PER_MONTH) * PRICES.s3.storagePerGbMonth;
  const sendRequests = MILLION * Math.ceil(messageBytes / (PRICES.sqs.meteredKiB * 1024));
  const receiveAndDelete = (2 * MILLION) / a.messagesPerReceiveOrDelete;
  const sqs = (sendRequests + receiveAndDelete) * PRICES.sqs.perRequest;
  const gbSeconds =
    ((MILLION * a.archiverMsPerDelivery + objects * a.archiverMsPerInvocation) / 1000) *
    (ARCHIVER_MEMORY_MB / 1024);
  const archiver = objects * PRICES.lambda.perRequest + gbSeconds * PRICES.lambda.perGbSecond;
  return {
    ratePerSecond,
    deliveriesPerObject,
    puts,
    storage,
    sqs,
    archiver,
    total: puts + storage + sqs + archiver,
  };
}
