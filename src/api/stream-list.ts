import type { Response } from 'express';

/**
 * Sends `{status:'success', message:{[collection]: [...]}}` while the records are still being
 * read: each chunk is written as soon as it arrives and the next one is read only when the
 * socket has taken the last (backpressure), so memory holds one chunk whatever the list's size.
 * A failure before the first byte reaches the error middleware as usual; after it, the
 * connection is cut (the client sees a truncated body, never a wrong one). A chunk is either
 * records, or records already written as JSON and separated by commas (a string, or its UTF-8 bytes).
 */
export async function sendStreamedList(res: Response, collection: string, chunks: AsyncIterable<unknown[] | string | Buffer>): Promise<void> {
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
      let chunk: string | Buffer;
      if (typeof next.value === 'string' || Buffer.isBuffer(next.value)) {
        // Records already written as JSON (comma-separated): written as they are.
        if (separator) res.write(separator);
        chunk = next.value;
        separator = ',';
      } else {
        let text = '';
        for (const item of next.value) {
          text += separator + JSON.stringify(item);
          separator = ',';
        }
        chunk = text;
      }
      if (!res.write(chunk) && !closed) await drained();
      if (closed) return;
      next = await iterator.next();
    }
    res.end(']}}');
  } finally {
    if (!next.done) await iterator.return?.(undefined);
  }
}
