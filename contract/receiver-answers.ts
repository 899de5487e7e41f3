/**
 * What the receiver's answers say beyond their status, for the people and tools that read them (Meta reads
 * only the status): a 200 for a body the receiver quarantined says so, and why, in its body.
 */

/** The start of a 200's body when the receiver quarantined the body it was sent (`quarantined: invalid-json`). */
export const QUARANTINED_ANSWER_PREFIX = 'quarantined: ';

/** The quarantine reason a receiver's answer names, or undefined for any other answer. */
export function quarantineReasonOf(answerBody: string): string | undefined {
  return answerBody.startsWith(QUARANTINED_ANSWER_PREFIX)
    ? answerBody.slice(QUARANTINED_ANSWER_PREFIX.length).trim()
    : undefined;
}
