/** The run's timeline: which phase a moment belongs to, measured from the start of the traffic. */

export type Phase = 'live' | 'outage' | 'recovery' | 'drain';

export interface Timeline {
  readonly durationSeconds: number;
  readonly outageStartSeconds: number;
  readonly outageSeconds: number;
}

export class PhaseClock {
  readonly startedAt: number;
  readonly #timeline: Timeline;
  #draining = false;

  constructor(startedAt: number, timeline: Timeline) {
    this.startedAt = startedAt;
    this.#timeline = timeline;
  }

  /** From now on every moment is `drain`, even before the traffic period ends. */
  startDraining(): void {
    this.#draining = true;
  }

  elapsedSeconds(at = Date.now()): number {
    return (at - this.startedAt) / 1000;
  }

  phaseAt(at = Date.now()): Phase {
    const t = this.elapsedSeconds(at);
    const { durationSeconds, outageStartSeconds, outageSeconds } = this.#timeline;
    if (this.#draining || t >= durationSeconds) return 'drain';
    if (t < outageStartSeconds) return 'live';
    return t < outageStartSeconds + outageSeconds ? 'outage' : 'recovery';
  }
}
