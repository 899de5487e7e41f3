import { describe, expect, it } from 'vitest';
import {
  idListProblem,
  originOf,
  phoneNumberIdOf,
  wantsEvent,
  wantsOrigin,
} from '../../../contract/event-origin.ts';

const NUMBER = { phoneNumberId: '201', wabaId: '100' };
const SIBLING = { phoneNumberId: '202', wabaId: '100' };
const ACCOUNT_ONLY = { phoneNumberId: undefined, wabaId: '100' };
const STRANGER = { phoneNumberId: '301', wabaId: '300' };

describe('wantsOrigin', () => {
  it('wants everything without numbers or wabas', () => {
    for (const origin of [NUMBER, ACCOUNT_ONLY, STRANGER, { phoneNumberId: undefined, wabaId: undefined }]) {
      expect(wantsOrigin({}, origin)).toBe(true);
    }
  });

  it("limited to numbers: their events only, never their account's own events", () => {
    const selection = { numbers: ['201'] };
    expect([NUMBER, SIBLING, ACCOUNT_ONLY, STRANGER].map((origin) => wantsOrigin(selection, origin))).toEqual(
      [true, false, false, false],
    );
  });

  it('limited to wabas: every number of the account and its own events', () => {
    const selection = { wabas: ['100'] };
    expect([NUMBER, SIBLING, ACCOUNT_ONLY, STRANGER].map((origin) => wantsOrigin(selection, origin))).toEqual(
      [true, true, true, false],
    );
  });

  it('with both: the events of either', () => {
    const selection = { numbers: ['301'], wabas: ['100'] };
    expect([NUMBER, ACCOUNT_ONLY, STRANGER].map((origin) => wantsOrigin(selection, origin))).toEqual([
      true,
      true,
      true,
    ]);
    expect(wantsOrigin(selection, { phoneNumberId: '302', wabaId: '300' })).toBe(false);
  });

  it('wants the field and the origin together', () => {
    const selection = { fields: ['messages'], numbers: ['201'] };
    expect(wantsEvent(selection, { field: 'messages', ...NUMBER })).toBe(true);
    expect(wantsEvent(selection, { field: 'calls', ...NUMBER })).toBe(false);
    expect(wantsEvent(selection, { field: 'messages', ...SIBLING })).toBe(false);
  });
});

describe('phoneNumberIdOf', () => {
  it.each([
    ['metadata (messages and the fields shaped like it)', { metadata: { phone_number_id: '201' } }, '201'],
    ['recipient (messaging_handovers)', { recipient: { phone_number_id: '201' } }, '201'],
    [
      'phone_number_settings (account_settings_update)',
      { phone_number_settings: { phone_number_id: '201' } },
      '201',
    ],
    [
      'a display number only (phone_number_quality_update)',
      { display_phone_number: '15550783881' },
      undefined,
    ],
    ['a numeric id, which Meta never sends', { metadata: { phone_number_id: 201 } }, undefined],
    ['an empty id', { metadata: { phone_number_id: '' } }, undefined],
    ['a value that is not an object', 'x', undefined],
  ])('reads %s', (_, value, expected) => {
    expect(phoneNumberIdOf(value)).toBe(expected);
  });

  it('takes the account from the entry', () => {
    expect(originOf('messages', { id: '100' }, { metadata: { phone_number_id: '201' } })).toEqual({
      field: 'messages',
      ...NUMBER,
    });
    expect(originOf('-', 'not an entry', undefined)).toEqual({
      field: '-',
      phoneNumberId: undefined,
      wabaId: undefined,
    });
  });
});

describe('idListProblem', () => {
  it('accepts digits, and names what is not', () => {
    expect(idListProblem('numbers', ['106540352242922'])).toBeUndefined();
    expect(idListProblem('numbers', [])).toMatch(/^numbers is empty/);
    expect(idListProblem('wabas', ['12a', 7, '+1555'])).toBe(
      `wabas holds "12a", 7, "+1555": give Meta's ids as strings of digits (a phone number id, not the phone number).`,
    );
  });
});
