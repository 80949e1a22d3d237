import type { Response } from 'express';

/** Resolves when the response can take more data, or when the client has gone. */
function drained(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Sends `{status:'success', message:{[collection]: [...]}}` while the records are still being
 * read: each chunk is written as soon as it arrives and the next one is read only when the
 * socket has taken the last (backpressure), so memory holds one chunk whatever the list's size.
 * A failure before the first byte reaches the error middleware as usual; after it, the
 * connection is cut (the client sees a truncated body, never a wrong one).
 */
export async function sendStreamedList(res: Response, collection: string, chunks: AsyncIterable<unknown[]>): Promise<void> {
  const iterator = chunks[Symbol.asyncIterator]();
  let next = await iterator.next();
  res.status(200).type('application/json');
  let separator = '';
  res.write(`{"status":"success","message":{${JSON.stringify(collection)}:[`);
  try {
    while (!next.done) {
      let text = '';
      for (const item of next.value) {
        text += separator + JSON.stringify(item);
        separator = ',';
      }
      if (!res.write(text)) await drained(res);
      if (res.destroyed) return;
      next = await iterator.next();
    }
    res.end(']}}');
  } finally {
    if (!next.done) await iterator.return?.(undefined);
  }
}
