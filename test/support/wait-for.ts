/** A test that pauses a local subscriber: a pause waits for each lane's long poll to return (up to 20 s), as on AWS. */
export const PAUSE_TEST_TIMEOUT_MS = 90_000;

/** Polls `check` every 50 ms until it returns true; fails after `timeoutMs`, saying what was awaited. */
export async function waitFor(
  check: () => Promise<boolean> | boolean,
  timeoutMs = 10_000,
  describe: () => string = () => 'the condition never held',
): Promise<void> {
  const giveUp = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > giveUp) throw new Error(`Timed out after ${timeoutMs} ms: ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
