import type { LedgerWrite, Outcome } from './outcomes';

/**
 * Group commit for the send ledger. Outcomes and the starts of the next transmissions are
 * gathered for `gatherMs` (and while the previous write runs) and go into one write: about a
 * write a millisecond under load, each as small as the traffic since the last one. Without the
 * wait every write carried about three rows, and its transaction cost more than the messages
 * (bench:send: 0.64 writes per message, 790 µs of worker CPU per message; with 1 ms, 0.2 and
 * 510 µs). Writes (and jobs such as lease renewal) run one after another, never beside each other.
 */
export class LedgerWriter {
  private outcomes: Outcome[] = [];
  private starts: number[] = [];
  private waiters: Array<(started: ReadonlySet<number>) => void> = [];
  private jobs: Array<() => Promise<void>> = [];
  private running: Promise<void> | null = null;

  constructor(
    /** Writes one batch in one transaction; answers the starts it marked. */
    private readonly write: (batch: Required<LedgerWrite>) => Promise<ReadonlySet<number>>,
    /** A write that failed: its outcomes are not recorded and none of its starts is marked. */
    private readonly onError: (err: unknown, batch: Required<LedgerWrite>) => void,
    private readonly gatherMs = 1,
  ) {}

  /** Hands in an outcome; it is written with the next batch. */
  record(outcome: Outcome): void {
    this.outcomes.push(outcome);
    this.kick();
  }

  /**
   * Marks that the message's transmission starts, together with every outcome handed in so
   * far; resolves true once that is durable, false when the row is no longer this worker's
   * (its lease was taken over) or the write failed: then it must not be sent.
   */
  start(id: number): Promise<boolean> {
    this.starts.push(id);
    return new Promise((resolve) => {
      this.waiters.push((started) => resolve(started.has(id)));
      this.kick();
    });
  }

  /** Resolves once everything handed in so far is written. */
  flush(): Promise<void> {
    if (!this.running && !this.outcomes.length && !this.starts.length) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiters.push(() => resolve());
      this.kick();
    });
  }

  /** Runs `job` between two writes (it never overlaps one); resolves when it ran. */
  between(job: () => Promise<void>): Promise<void> {
    return new Promise((resolve) => {
      this.jobs.push(() => job().finally(resolve));
      this.kick();
    });
  }

  private kick(): void {
    if (!this.running) this.running = this.loop();
  }

  private async loop(): Promise<void> {
    while (this.outcomes.length || this.starts.length || this.waiters.length || this.jobs.length) {
      // Lets the slots that finish meanwhile add theirs to this write.
      await new Promise((resolve) => setTimeout(resolve, this.gatherMs));
      const jobs = this.jobs;
      this.jobs = [];
      for (const job of jobs) await job().catch(() => undefined);
      const batch = { outcomes: this.outcomes, starts: this.starts };
      const waiters = this.waiters;
      this.outcomes = [];
      this.starts = [];
      this.waiters = [];
      let started: ReadonlySet<number> = new Set();
      if (batch.outcomes.length || batch.starts.length) {
        try {
          started = await this.write(batch);
        } catch (err) {
          this.onError(err, batch);
        }
      }
      for (const waiter of waiters) waiter(started);
    }
    this.running = null;
  }
}

/** At most `size` holders at once; the others wait in turn. */
export class Permits {
  private free: number;
  private readonly queue: Array<() => void> = [];

  constructor(size: number) {
    this.free = size;
  }

  /** `first`: waits ahead of every other waiter (urgent mail during a bulk send). */
  async acquire(first = false): Promise<void> {
    if (this.free > 0) {
      this.free -= 1;
      return;
    }
    await new Promise<void>((resolve) => (first ? this.queue.unshift(resolve) : this.queue.push(resolve)));
  }

  release(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.free += 1;
  }
}
