import { once } from 'node:events';
import type { Response } from 'express';

/**
 * Sends text pieces (an async iterable: a CSV read from the database in chunks) as the body,
 * waiting whenever the client reads slower than they come, so memory holds one piece. A
 * client that goes away stops the reading. Headers must be set before.
 */
export async function streamText(res: Response, pieces: AsyncIterable<string>): Promise<void> {
  const closed = once(res, 'close');
  for await (const piece of pieces) {
    if (res.destroyed) return;
    if (!res.write(piece)) await Promise.race([once(res, 'drain'), closed]);
  }
  res.end();
}

/**
 * Takes the first piece before anything is sent, so an error thrown before the first piece
 * (a record not found) still gets its normal error answer; then sends the headers and streams.
 */
export async function streamCsv(res: Response, fileName: string, pieces: AsyncGenerator<string>): Promise<void> {
  const first = await pieces.next();
  res.status(200).attachment(fileName).type('text/csv; charset=utf-8');
  async function* all(): AsyncGenerator<string> {
    if (!first.done) yield first.value;
    yield* pieces;
  }
  await streamText(res, all());
}
