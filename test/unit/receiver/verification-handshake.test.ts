import { describe, expect, it } from 'vitest';
import {
  answerVerificationHandshake,
  MAX_CHALLENGE_LENGTH,
} from '../../../functions/receiver/verification-handshake.ts';

const TOKEN = 'my-verify-token';

describe('answerVerificationHandshake', () => {
  it('echoes the challenge verbatim for subscribe with our token', () => {
    const challenge = '1158201444 with spaces & symbols <é>';
    expect(
      answerVerificationHandshake(
        { 'hub.mode': 'subscribe', 'hub.verify_token': TOKEN, 'hub.challenge': challenge },
        TOKEN,
      ),
    ).toEqual({ statusCode: 200, body: challenge, outcome: 'verified' });
  });

  it.each([
    ['no challenge', { 'hub.mode': 'subscribe', 'hub.verify_token': TOKEN }, 400, 'no-challenge'],
    [
      'an empty challenge',
      { 'hub.mode': 'subscribe', 'hub.verify_token': TOKEN, 'hub.challenge': '' },
      400,
      'no-challenge',
    ],
    ['no parameters at all', {}, 400, 'no-challenge'],
    [
      'no challenge and a wrong token',
      { 'hub.mode': 'subscribe', 'hub.verify_token': 'x' },
      400,
      'no-challenge',
    ],
    [
      'a wrong token',
      { 'hub.mode': 'subscribe', 'hub.verify_token': 'wrong', 'hub.challenge': '1' },
      403,
      'wrong-token',
    ],
    [
      'a token differing only in case',
      { 'hub.mode': 'subscribe', 'hub.verify_token': TOKEN.toUpperCase(), 'hub.challenge': '1' },
      403,
      'wrong-token',
    ],
    [
      'a token prefix',
      { 'hub.mode': 'subscribe', 'hub.verify_token': TOKEN.slice(0, 4), 'hub.challenge': '1' },
      403,
      'wrong-token',
    ],
    ['no token', { 'hub.mode': 'subscribe', 'hub.challenge': '1' }, 403, 'wrong-token'],
    [
      'another mode',
      { 'hub.mode': 'unsubscribe', 'hub.verify_token': TOKEN, 'hub.challenge': '1' },
      403,
      'wrong-mode',
    ],
    ['no mode', { 'hub.verify_token': TOKEN, 'hub.challenge': '1' }, 403, 'wrong-mode'],
  ])('answers a request with %s with %i', (_, query, statusCode, outcome) => {
    expect(answerVerificationHandshake(query, TOKEN)).toEqual({ statusCode, body: '', outcome });
  });

  it(`echoes a challenge of ${MAX_CHALLENGE_LENGTH} characters, and refuses a longer one with 400 whatever the token`, () => {
    const longest = '9'.repeat(MAX_CHALLENGE_LENGTH);
    const subscribe = { 'hub.mode': 'subscribe', 'hub.verify_token': TOKEN };
    expect(answerVerificationHandshake({ ...subscribe, 'hub.challenge': longest }, TOKEN)).toEqual({
      statusCode: 200,
      body: longest,
      outcome: 'verified',
    });
    const tooLong = `${longest}9`;
    expect(answerVerificationHandshake({ ...subscribe, 'hub.challenge': tooLong }, TOKEN)).toEqual({
      statusCode: 400,
      body: '',
      outcome: 'challenge-too-long',
    });
    expect(
      answerVerificationHandshake(
        { ...subscribe, 'hub.verify_token': 'wrong', 'hub.challenge': tooLong },
        TOKEN,
      ),
    ).toEqual({ statusCode: 400, body: '', outcome: 'challenge-too-long' });
  });

  it('answers 400 when there is no query string at all', () => {
    expect(answerVerificationHandshake(undefined, TOKEN).statusCode).toBe(400);
  });

  it('never verifies against an empty configured token', () => {
    const query = { 'hub.mode': 'subscribe', 'hub.verify_token': '', 'hub.challenge': '1' };
    expect(answerVerificationHandshake(query, '').statusCode).toBe(403);
  });
});
