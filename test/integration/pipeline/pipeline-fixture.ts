/** The pipeline harness moved to test/support/ so that the reliability suite shares it; kept here for imports. */
export * from '../../support/pipeline-fixture.ts';
