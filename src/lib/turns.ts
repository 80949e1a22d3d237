/**
 * Pieces of CPU-bound work (previews and test sends, each rendering a message) that take turns
 * on the event loop: each starts only after the loop has had a turn since the last one ended,
 * so any number of them at once delay a request such as /healthz by one piece, not by all.
 */
export class Turns {
  private last: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const turn = this.last.then(() => new Promise<void>((resolve) => setImmediate(resolve))).then(work);
    this.last = turn.catch(() => undefined);
    return turn;
  }
}
