import { describe, expect, it } from 'vitest';
import { groupCustomersOf, groupEventDetails, isGroupField } from '../../../functions/events/group-item.ts';

describe('groupCustomersOf', () => {
  it('takes ids as Meta labels them, and a bare input as a BSUID only when it has a BSUID’s shape', () => {
    const customers = groupCustomersOf({
      removed_participants: [{ input: '16505552345' }, { input: 'US.77102938465501928374' }],
      failed_participants: [{ input: 'DE.1', wa_id: '4915112345678' }],
    });
    expect(
      customers.map(({ list, phoneNumber, userId, input }) => ({ list, phoneNumber, userId, input })),
    ).toEqual([
      { list: 'removed', phoneNumber: '16505552345', userId: undefined, input: '16505552345' },
      {
        list: 'removed',
        phoneNumber: undefined,
        userId: 'US.77102938465501928374',
        input: 'US.77102938465501928374',
      },
      { list: 'failed', phoneNumber: '4915112345678', userId: undefined, input: 'DE.1' },
    ]);
  });

  it('leaves out members with no id and members that are not objects; the requester comes last', () => {
    const customers = groupCustomersOf({
      added_participants: [{}, 'x', { user_id: 'US.1', parent_user_id: 'P.1', username: 'ana' }],
      wa_id: '16505554567',
    });
    expect(customers).toEqual([
      {
        list: 'added',
        input: undefined,
        phoneNumber: undefined,
        userId: 'US.1',
        parentUserId: 'P.1',
        username: 'ana',
        name: undefined,
        address: { recipient: 'US.1' },
      },
      expect.objectContaining({
        list: 'requester',
        phoneNumber: '16505554567',
        address: { to: '16505554567' },
      }),
    ]);
  });
});

describe('groupEventDetails', () => {
  it('reads the group, type and request ids as strings, undefined when absent or empty', () => {
    expect(
      groupEventDetails({ group_id: 'G', type: 'group_delete', request_id: '', join_request_id: 5 }),
    ).toEqual({
      groupId: 'G',
      type: 'group_delete',
      requestId: undefined,
      joinRequestId: undefined,
      customers: [],
    });
  });

  it('knows the four Groups API fields and no other', () => {
    expect(
      [
        'group_lifecycle_update',
        'group_participants_update',
        'group_settings_update',
        'group_status_update',
      ].every(isGroupField),
    ).toBe(true);
    expect(['group_participant_update', 'groups', 'messages', 'standby'].some(isGroupField)).toBe(false);
  });
});
