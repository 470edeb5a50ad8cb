/** Time comes from here, never from `Date.now()` in a rule, so expiry is tested without sleeping. */
export abstract class Clock {
  abstract now(): Date;
  /** Listeners run after a manual clock moves (the scheduler sweeps at once). */
  onAdvance(_listener: () => void): void {}
}

export class SystemClock extends Clock {
  now(): Date {
    return new Date();
  }
}

export class ManualClock extends Clock {
  private t: number;
  private readonly listeners: Array<() => void> = [];

  constructor(start: Date | string = '2026-01-01T00:00:00.000Z') {
    super();
    this.t = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.t);
  }

  advance(ms: number): void {
    this.t += ms;
    for (const l of this.listeners) l();
  }

  advanceSeconds(s: number): void {
    this.advance(s * 1000);
  }

  override onAdvance(listener: () => void): void {
    this.listeners.push(listener);
  }
}
