import type { Response } from 'express';

/**
 * Sends `{status:'success', message:{[collection]: [...]}}` while the records are still being
 * read: each chunk is written as soon as it arrives and the next one is read only when the
 * socket has taken the last (backpressure), so memory holds one chunk whatever the list's size.
 * A failure before the first byte reaches the error middleware as usual; after it, the
 * connection is cut (the client sees a truncated body, never a wrong one). Each chunk of
 * records is written by one `JSON.stringify`.
 */
export async function sendStreamedList(res: Response, collection: string, chunks: AsyncIterable<unknown[]>): Promise<void> {
  const iterator = chunks[Symbol.asyncIterator]();
  let next = await iterator.next();
  res.status(200).type('application/json');
  let separator = '';
  // One listener each for the whole response: compression() forwards `on` to its gzip stream
  // but not `off`, so adding and removing a listener per wait would pile them up there.
  let wake: (() => void) | undefined;
  const resume = () => {
    const waiting = wake;
    wake = undefined;
    waiting?.();
  };
  let closed = false;
  res.on('drain', resume);
  res.on('close', () => {
    closed = true;
    resume();
  });
  const drained = () => new Promise<void>((resolve) => (wake = resolve));
  res.write(`{"status":"success","message":{${JSON.stringify(collection)}:[`);
  try {
    while (!next.done) {
      // The chunk's array without its brackets, after a comma from the previous chunk.
      const records = JSON.stringify(next.value).slice(1, -1);
      if (records) {
        const written = res.write(separator + records);
        separator = ',';
        if (!written && !closed) await drained();
      }
      if (closed) return;
      next = await iterator.next();
    }
    res.end(']}}');
  } finally {
    if (!next.done) await iterator.return?.(undefined);
  }
}
