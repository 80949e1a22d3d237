import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Request, Response } from 'express';

const gzipAsync = promisify(gzip);

/** A JSON body encoded once, kept plain and gzipped, each with a strong ETag of its bytes. */
export interface EncodedJson {
  plain: Buffer;
  gzipped: Buffer;
  etag: string;
}

export async function encodeJson(value: unknown): Promise<EncodedJson> {
  const plain = Buffer.from(JSON.stringify(value));
  const gzipped = await gzipAsync(plain, { level: 9 });
  const etag = createHash('sha256').update(plain).digest('base64url').slice(0, 32);
  return { plain, gzipped, etag };
}

/**
 * Sends the gzipped bytes to a client that accepts gzip and the plain JSON to one that does
 * not, with a strong ETag per representation; a matching If-None-Match is a 304.
 * `no-transform` keeps the compression middleware (and proxies) from re-encoding it.
 */
export function sendEncodedJson(req: Request, res: Response, encoded: EncodedJson, maxAgeSeconds: number): void {
  const gzipped = req.acceptsEncodings('gzip', 'identity') === 'gzip';
  res.setHeader('Vary', 'Accept-Encoding');
  res.setHeader('Cache-Control', `private, max-age=${maxAgeSeconds}, no-transform`);
  res.setHeader('ETag', gzipped ? `"${encoded.etag}-gz"` : `"${encoded.etag}"`);
  if (req.fresh) return void res.status(304).end();
  const body = gzipped ? encoded.gzipped : encoded.plain;
  res.status(200);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  if (gzipped) res.setHeader('Content-Encoding', 'gzip');
  res.setHeader('Content-Length', body.length);
  res.end(body);
}
