/**
 * Pieces of CPU-bound work (previews and test sends, each rendering a message) that take turns
 * on the event loop: each starts only after the loop has been free for a moment since the last
 * one ended (long enough for a small request to be read, answered and written), so any number of
 * them at once delay a request such as /healthz by about one piece, not by all of them.
 */
export class Turns {
  constructor(private readonly gapMs = 25) {}

  private last: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const turn = this.last.then(() => new Promise<void>((resolve) => setTimeout(resolve, this.gapMs))).then(work);
    this.last = turn.catch(() => undefined);
    return turn;
  }
}
