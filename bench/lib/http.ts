import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { BenchServer } from './server';

/** Plain node:http calls to the bench server on 127.0.0.1 (no client library in the way of the figures). */

export interface Reply {
  status: number;
  body: Buffer;
}

function headersOf(server: BenchServer): Record<string, string> {
  if (!server.keys) throw new Error('the server printed no demo keys (was the database fresh?)');
  return { ...server.keys };
}

function collect(res: http.IncomingMessage): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
    res.on('error', reject);
  });
}

/** A form POST (urlencoded) or a GET, answered as parsed JSON; fails on anything but 200. */
export async function callApi(server: BenchServer, method: 'GET' | 'POST', apiPath: string, form?: Record<string, string>): Promise<any> {
  const body = form ? new URLSearchParams(form).toString() : undefined;
  const reply = await new Promise<Reply>((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: server.port,
        method,
        path: `/api/v1${apiPath}`,
        headers: { ...headersOf(server), ...(body ? { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': Buffer.byteLength(body) } : {}) },
      },
      (res) => collect(res).then(resolve, reject),
    );
    req.on('error', reject);
    req.end(body);
  });
  const parsed = JSON.parse(reply.body.toString());
  if (reply.status !== 200) throw new Error(`${method} ${apiPath}: ${reply.status} ${reply.body.toString().slice(0, 500)}`);
  return parsed;
}

/** POSTs a file as multipart/form-data, streamed from disk (the bench never holds it in memory). */
export async function uploadFile(server: BenchServer, apiPath: string, fields: Record<string, string>, file: string): Promise<Reply> {
  const boundary = `----bench${crypto.randomBytes(8).toString('hex')}`;
  let head = '';
  for (const [name, value] of Object.entries(fields)) head += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  head += `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${path.basename(file)}"\r\nContent-Type: text/csv\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  const length = Buffer.byteLength(head) + fs.statSync(file).size + Buffer.byteLength(tail);
  return new Promise<Reply>((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: server.port,
        method: 'POST',
        path: `/api/v1${apiPath}`,
        headers: { ...headersOf(server), 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': length },
      },
      (res) => collect(res).then(resolve, reject),
    );
    req.on('error', reject);
    req.write(head);
    pipeline(fs.createReadStream(file), req, { end: false })
      .then(() => req.end(tail))
      .catch(reject);
  });
}

/** A GET read to its end as fast as it arrives (the bench keeps the body to check it; the server streams it). */
export function getAll(server: BenchServer, apiPath: string, headers: Record<string, string> = {}): Promise<Reply & { bytes: number }> {
  return new Promise((resolve, reject) => {
    // A connection of its own, as the bare server's list is read (limits.ts timedGet).
    const req = http.get({ host: '127.0.0.1', port: server.port, path: `/api/v1${apiPath}`, headers: { ...headersOf(server), ...headers }, agent: false }, (res) =>
      collect(res).then((reply) => resolve({ ...reply, bytes: reply.body.length }), reject),
    );
    req.on('error', reject);
  });
}
