/** The consumer part's contestants, in the order the tables list them. */
export const CONTESTANTS = ['ours', 'powertools', 'contractFloor'] as const;
export type ContestantName = (typeof CONTESTANTS)[number];

export const CONTESTANT_LABELS: Readonly<Record<ContestantName, string>> = {
  ours: 'ours',
  powertools: 'Powertools',
  contractFloor: 'contract floor',
};
