// Restart discipline for the sidecar process, without `vscode`: at most one start/stop runs
// at a time and at most one more waits (bursts of settings changes become one restart), and
// an unexpected exit is retried after a growing delay; and the queue that lets servers' questions
// to the person take turns.

/** Runs async jobs one at a time; while one runs, later requests collapse into one queued run. */
export class Serializer {
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;

  run(job: () => Promise<void>): Promise<void> {
    if (!this.running) {
      this.running = job().finally(() => {
        this.running = undefined;
      });
      return this.running;
    }
    if (!this.queued) {
      const current = this.running;
      this.queued = current
        .catch(() => undefined)
        .then(() => {
          this.queued = undefined;
          return this.run(job);
        });
    }
    return this.queued;
  }

  get busy(): boolean {
    return this.running !== undefined;
  }
}

/** Delays between restarts after crashes: 1 s, 2 s, 4 s … capped; reset after a stable run. */
export class Backoff {
  private attempt = 0;
  private lastStart = 0;

  constructor(
    private readonly baseMs = 1000,
    private readonly maxMs = 30_000,
    private readonly stableMs = 60_000,
    private readonly maxAttempts = 8,
    private readonly now: () => number = Date.now,
  ) {}

  /** Call when the process started. */
  started(): void {
    this.lastStart = this.now();
  }

  /** The delay before the next restart, or undefined when it should stop trying. */
  nextDelay(): number | undefined {
    if (this.lastStart !== 0 && this.now() - this.lastStart >= this.stableMs) this.attempt = 0;
    if (this.attempt >= this.maxAttempts) return undefined;
    const delay = Math.min(this.maxMs, this.baseMs * 2 ** this.attempt);
    this.attempt += 1;
    return delay;
  }

  reset(): void {
    this.attempt = 0;
  }
}

/**
 * Runs jobs one after another, each after the previous one settled, in the order they came:
 * the questions servers ask a person (one quick input or modal at a time, whichever server
 * asks). A job that fails does not stop the ones after it.
 */
export class Turns {
  private last: Promise<unknown> = Promise.resolve();

  run<T>(job: () => Promise<T>): Promise<T> {
    const mine = this.last.catch(() => undefined).then(job);
    this.last = mine.catch(() => undefined);
    return mine;
  }
}
