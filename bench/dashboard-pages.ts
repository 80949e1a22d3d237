/**
 * How fast the dashboard's pages answer, signed in, with some data in the account: median and
 * 95th percentile over repeated requests, for the whole document and for a boosted (body-only)
 * request. Run: `node -r @swc-node/register bench/dashboard-pages.ts` (a throwaway SQLite file
 * under /tmp; prints figures, asserts nothing).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { boot } from '../src/boot';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/logger';

const ROUNDS = 40;
const PAGES = ['/', '/contact-types', '/global-unsubscribes', '/unsubscribe-groups', '/custom-fields', '/single-sends', '/senders', '/design-templates', '/settings'];

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function request(port: number, method: string, url: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: url, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dashboard-bench-'));
  try {
    const config = loadConfig({ DATA_DIR: dir, SQLITE_FILE: path.join(dir, 'bench.sqlite3'), LOG_LEVEL: 'silent', LOGIN_RATE_LIMIT: '0' });
    const runtime = await boot(config, createLogger('silent'));
    const { services } = runtime;
    const account = await services.accounts.create({ email: 'bench@example.com', password: 'bench bench bench' });
    const ctx = { userId: account.user_id };
    for (let i = 0; i < 30; i += 1) await services.contactTypes.add(ctx, { name: `Type ${i}` });
    await services.globalUnsubscribes.add(ctx, Array.from({ length: 1000 }, (_, i) => `gone${i}@example.com`));
    for (let i = 0; i < 20; i += 1) await services.unsubscribeGroups.add(ctx, { group_name: `Group ${i}`, description: 'd', is_display: 1 });

    const server = runtime.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;

    const login = await request(port, 'GET', '/login', {});
    const signInCookie = String(login.headers['set-cookie']?.[0]).split(';')[0];
    const token = /name="_csrf" value="([^"]+)"/.exec(login.body)?.[1] ?? '';
    const form = new URLSearchParams({ _csrf: token, email: 'bench@example.com', password: 'bench bench bench' }).toString();
    const signedIn = await request(port, 'POST', '/login', { Cookie: signInCookie, 'Content-Type': 'application/x-www-form-urlencoded' }, form);
    const cookie = String(signedIn.headers['set-cookie']?.find((c) => c.startsWith('cc_session='))).split(';')[0];

    console.log(`page                      document p50/p95 ms   boosted p50/p95 ms   bytes (document)`);
    for (const page of PAGES) {
      const time = async (headers: Record<string, string>) => {
        const times: number[] = [];
        let bytes = 0;
        for (let i = 0; i < ROUNDS; i += 1) {
          const start = process.hrtime.bigint();
          const answer = await request(port, 'GET', page, { Cookie: cookie, ...headers });
          times.push(Number(process.hrtime.bigint() - start) / 1e6);
          if (answer.status !== 200) throw new Error(`${page} answered ${answer.status}`);
          bytes = Buffer.byteLength(answer.body);
        }
        times.sort((a, b) => a - b);
        return { p50: percentile(times, 50), p95: percentile(times, 95), bytes };
      };
      const doc = await time({});
      const boosted = await time({ 'HX-Request': 'true', 'HX-Boosted': 'true', 'HX-Request-Type': 'full' });
      console.log(
        `${page.padEnd(26)}${doc.p50.toFixed(1).padStart(6)} / ${doc.p95.toFixed(1).padEnd(12)}${boosted.p50.toFixed(1).padStart(8)} / ${boosted.p95.toFixed(1).padEnd(11)}${String(doc.bytes).padStart(8)}`,
      );
    }
    server.close();
    console.log(`${ROUNDS} requests per figure; rss after: ${(process.memoryUsage().rss / 1048576).toFixed(0)} MiB; load: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    await runtime.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
