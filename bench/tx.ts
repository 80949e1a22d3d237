/**
 * bench/tx: transactional mail through the built server (`--role=both`, as `npm start` runs it)
 * into an SMTP sink in this process, which notes when each address's message arrives.
 *   1. 1,000 messages posted to POST /api/v1/transactional/send by 20 clients at once: the accept
 *      rate, and the time from each answer to the message's arrival at the sink (p50, p95).
 *   2. The same while a single send to 100,000 contacts (`-- --recipients N`) is going out.
 * Targets: p95 ≤ 1 s during the bulk send; accept rate ≥ 500 messages/s.
 *
 *   npm run bench:tx [-- --recipients 100000 --messages 1000]
 *   BENCH_CPU_PROF=/tmp/prof writes the server's CPU profile there (node --cpu-prof)
 *   DATABASE_URL=postgres://127.0.0.1:5432/test npm run bench:tx   (a scratch database on that server)
 */
import { execSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SMTPServer } from 'smtp-server';
import { createDb } from '../src/db';
import { sha256 } from '../src/lib/crypto';
import { migrateAndSeed } from '../src/migrate';
import { startServiceProcess } from '../test/support/processes';
import { freePort } from './lib/limits';
import { createSend, scratchDatabase } from './lib/send-setup';

const CLIENTS = 20;
const SECRET = 'bench-secret-key';

/** An SMTP sink that notes the arrival time of each recipient's first message. */
async function startSink(): Promise<{ port: number; arrived: Map<string, number>; bulk(): number; close(): Promise<void> }> {
  const arrived = new Map<string, number>();
  let bulk = 0;
  const server = new SMTPServer({
    disableReverseLookup: true,
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        const at = performance.now();
        for (const r of session.envelope.rcptTo) {
          if (r.address.endsWith('@bench.example')) bulk += 1;
          else if (!arrived.has(r.address)) arrived.set(r.address, at);
        }
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.server.address();
  return { port: typeof address === 'object' && address ? address.port : 0, arrived, bulk: () => bulk, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { recipients: { type: 'string', default: '100000' }, messages: { type: 'string', default: '1000' } } });
  const recipients = Number(values.recipients);
  const count = Number(values.messages);
  const kind = process.env.DATABASE_URL ? 'PostgreSQL' : 'SQLite';
  console.log(`uptime: ${execSync('uptime').toString().trim()}`);
  const sink = await startSink();
  const database = await scratchDatabase();
  const db = createDb(database);
  let server: ReturnType<typeof startServiceProcess> | undefined;
  try {
    await migrateAndSeed(db);
    const setupStart = Date.now();
    const sendId = await createSend(db, recipients, '<html><body><p>Dear ((first_name)), the news.</p></body></html>');
    // Not due yet: the first round runs alone.
    await db('single_sends').where({ id: sendId }).update({ status: 0, due_at: null });
    const send = await db('single_sends').where({ id: sendId }).first('user_id', 'sender_id');
    const account = await db('accounts').where({ id: send.user_id }).first('public_key');
    await db('accounts').where({ id: send.user_id }).update({ secret_key_hash: sha256(SECRET) });
    console.log(`setup: ${recipients} contacts and a draft send in ${((Date.now() - setupStart) / 1000).toFixed(1)} s (${kind})`);

    const port = await freePort();
    server = startServiceProcess(['--role=both'], {
      ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : { SQLITE_FILE: database.sqliteFile }),
      DATA_DIR: path.join(os.tmpdir(), `bench-tx-${process.pid}`),
      PORT: String(port),
      HOST: '127.0.0.1',
      APP_SECRET: 'b'.repeat(64),
      SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
      BASE_URL: 'https://campaigns.example.com',
      API_RATE_LIMIT: '0',
      LOG_LEVEL: 'warn',
    }, true, process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []);
    const headers = { 'Content-Type': 'application/json', PublicKey: String(account.public_key), SecretKey: SECRET };
    for (let i = 0; i < 200; i += 1) {
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
      if (ok) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    /** Posts `count` messages with CLIENTS at once; answers the accept rate and each answer's time by address. */
    const round = async (label: string) => {
      const answered = new Map<string, number>();
      let next = 0;
      const start = performance.now();
      const client = async () => {
        while (next < count) {
          const to = `${label}-${next++}@tx.example`;
          const res = await fetch(`http://127.0.0.1:${port}/api/v1/transactional/send`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ to, sender_id: send.sender_id, subject: 'Your receipt {{ data.order }}', html: '<p>Thanks for order {{ data.order }}.</p>', data: { order: to } }),
          });
          if (res.status !== 200) throw new Error(`${to}: ${res.status} ${await res.text()}`);
          await res.arrayBuffer();
          answered.set(to, performance.now());
        }
      };
      await Promise.all(Array.from({ length: CLIENTS }, client));
      const acceptRate = count / ((performance.now() - start) / 1000);
      const deadline = Date.now() + 120_000;
      while ([...answered.keys()].some((to) => !sink.arrived.has(to)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      const latencies = [...answered].filter(([to]) => sink.arrived.has(to)).map(([to, at]) => sink.arrived.get(to)! - at);
      return { acceptRate, p50: percentile(latencies, 50), p95: percentile(latencies, 95), arrived: latencies.length };
    };

    const alone = await round('alone');
    console.log(`alone (${kind}): accepted ${alone.acceptRate.toFixed(0)} msgs/s; answer to arrival p50 ${alone.p50.toFixed(0)} ms, p95 ${alone.p95.toFixed(0)} ms (${alone.arrived}/${count} arrived)`);

    await db('single_sends').where({ id: sendId }).update({ status: 1, due_at: new Date().toISOString() });
    while (sink.bulk() < Math.min(5000, recipients / 10)) await new Promise((resolve) => setTimeout(resolve, 100));
    const bulkBefore = sink.bulk();
    const during = await round('during');
    const bulkAfter = sink.bulk();
    console.log(`during the bulk send (${kind}): accepted ${during.acceptRate.toFixed(0)} msgs/s; answer to arrival p50 ${during.p50.toFixed(0)} ms, p95 ${during.p95.toFixed(0)} ms (${during.arrived}/${count} arrived; the bulk send at ${bulkBefore} → ${bulkAfter} of ${recipients} meanwhile)`);
    console.log(`uptime at the end: ${execSync('uptime').toString().trim()}`);
    console.log(`targets: p95 during the bulk send ≤ 1000 ms: ${during.p95 <= 1000 ? 'met' : 'missed'}; accept rate ≥ 500 msgs/s: ${Math.min(alone.acceptRate, during.acceptRate) >= 500 ? 'met' : 'missed'} (${Math.min(alone.acceptRate, during.acceptRate).toFixed(0)})`);
  } finally {
    server?.child.kill('SIGTERM');
    if (server) await server.exited;
    await db.destroy();
    await database.drop();
    await sink.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
