/**
 * How the country-state-city list is served: the first request builds and compresses it,
 * later ones send the cached bytes or a 304. Run: `node -r @swc-node/register bench/country-state-city.ts`
 * (uses a throwaway SQLite file under /tmp; prints figures, asserts nothing).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { boot } from '../src/boot';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/logger';

async function timed<T>(label: string, run: () => Promise<T>): Promise<T> {
  const start = process.hrtime.bigint();
  const result = await run();
  console.log(`${label}: ${(Number(process.hrtime.bigint() - start) / 1e6).toFixed(1)} ms`);
  return result;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'csc-bench-'));
  try {
    const config = loadConfig({ DATA_DIR: dir, SQLITE_FILE: path.join(dir, 'bench.sqlite3'), LOG_LEVEL: 'silent', API_RATE_LIMIT: '0' });
    const runtime = await timed('migrate + seed (fresh SQLite)', () => boot(config, createLogger('silent')));
    const account = await runtime.services.accounts.create({ email: 'bench@example.com', password: 'bench bench bench' });
    const server = runtime.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    // Raw bytes, not decoded: the figures are the server's, not a client's JSON parsing.
    const get = (headers: Record<string, string>) =>
      new Promise<{ status: number; headers: http.IncomingHttpHeaders; bytes: number }>((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port, path: '/api/v1/get/country-state-city', headers: { PublicKey: account.public_key, SecretKey: account.secret_key, ...headers } }, (res) => {
          let bytes = 0;
          res.on('data', (chunk: Buffer) => (bytes += chunk.length));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes }));
        });
        req.on('error', reject);
      });

    const first = await timed('first request (query + build + gzip)', () => get({ 'Accept-Encoding': 'gzip' }));
    const rounds = 50;
    await timed(`${rounds} cached gzip requests`, async () => {
      for (let i = 0; i < rounds; i += 1) await get({ 'Accept-Encoding': 'gzip' });
    });
    await timed(`${rounds} revalidations (304)`, async () => {
      for (let i = 0; i < rounds; i += 1) await get({ 'Accept-Encoding': 'gzip', 'If-None-Match': String(first.headers.etag) });
    });
    const plain = await get({ 'Accept-Encoding': 'identity' });
    console.log(`sizes: gzip ${first.bytes} bytes, plain ${plain.bytes} bytes`);
    server.close();
    console.log(`rss after: ${(process.memoryUsage().rss / 1048576).toFixed(0)} MiB; load: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    await runtime.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
