/** A delivery as Meta POSTs it and API Gateway hands it to the receiver, signed with the bench's app secret. */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { toApiGatewayV2Event } from '../../../cli/local/http/api-gateway-v2.ts';
import { signBody } from '../../../functions/receiver/signature.ts';

export const BENCH_APP_SECRET = 'bench-app-secret';

export function signedPostEvent(body: string): APIGatewayProxyEventV2 {
  return toApiGatewayV2Event({
    method: 'POST',
    url: '/webhook',
    rawHeaders: [
      'content-type',
      'application/json',
      'user-agent',
      'facebookexternalua',
      'x-hub-signature-256',
      signBody(body, BENCH_APP_SECRET),
    ],
    body: Buffer.from(body),
    sourceIp: '173.252.0.1',
  });
}
