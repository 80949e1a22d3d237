/**
 * bench/send: one single send to N contacts (default 100,000) through an SMTP sink in another
 * process, personalised (the Newsletter template's placeholders) and tracked (pixel, signed
 * links, unsubscribe headers, and click tracking of the template's link plus three more), sent by a real `--role=worker` process (the build in dist/, as `npm run worker` runs it).
 * Prints messages per second, the worker's peak RSS, and the ceiling: bare nodemailer feeding
 * the same sink before and after (target: the worker's rate while sending ≥1.0 of their mean).
 * `--workers N` sends with N worker processes sharing the database (target on PostgreSQL with
 * two: the same ratio ≥1.0), each one's memory shown a quarter into the send and at its peak after.
 *
 *   npm run bench:send [-- --recipients 100000 --ceiling 20000 --workers 1]
 *   DATABASE_URL=postgres://127.0.0.1:5432/test npm run bench:send   (a scratch database on that server)
 *   DATABASE_URL=postgres://127.0.0.1:5432/test npm run bench:send -- --workers 2   (PostgreSQL, two workers)
 *   WORKER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" npm run bench:send   (profile the worker)
 *   SQLITE_CACHE_MB=8 npm run bench:send   (the worker's SQLite page cache, default 4 in a worker alone)
 *   WORKER_ENV="MALLOC_ARENA_MAX=2" npm run bench:send   (more environment for the worker)
 */
import { ChildProcess, execSync, fork } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import nodemailer from 'nodemailer';
import { createDb, Db } from '../src/db';
import { migrateAndSeed } from '../src/migrate';
import { startServiceProcess } from '../test/support/processes';
import { beside, TARGETS } from './lib/targets';
import { createSend, NEWSLETTER_TEMPLATE_ID, scratchDatabase } from './lib/send-setup';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { recipients: { type: 'string', default: '100000' }, ceiling: { type: 'string', default: '20000' }, workers: { type: 'string', default: '1' } } });
  const recipients = Number(values.recipients);
  const ceilingCount = Number(values.ceiling);
  const workerCount = Number(values.workers);
  if (!Number.isInteger(workerCount) || workerCount < 1) throw new Error('--workers: a whole number from 1');
  console.log(`uptime: ${execSync('uptime').toString().trim()}`);

  const sink = await startSink();
  const database = await scratchDatabase();
  const db = createDb(database);
  const workers: Array<ReturnType<typeof startServiceProcess>> = [];
  try {
    await migrateAndSeed(db);
    const ceiling = await bareNodemailer(sink.port, ceilingCount, await newsletterHtml(db));
    console.log(`ceiling: bare nodemailer (pool 5, 10 in flight) ${ceiling.toFixed(0)} msgs/s over ${ceilingCount} messages`);

    const setupStart = Date.now();
    const sendId = await createSend(db, recipients, withLinks(await newsletterHtml(db)));
    console.log(`setup: ${recipients} contacts and a ready send in ${((Date.now() - setupStart) / 1000).toFixed(1)} s`);

    const before = await sink.count();
    const start = Date.now();
    // Several workers share one secret, as processes behind one deployment do.
    const appSecret = crypto.randomBytes(32).toString('hex');
    for (let i = 0; i < workerCount; i += 1) {
      workers.push(startServiceProcess(['--role=worker'], {
        ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : { SQLITE_FILE: database.sqliteFile }),
        DATA_DIR: path.join(os.tmpdir(), `bench-send-${process.pid}`),
        APP_SECRET: appSecret,
        SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
        BASE_URL: 'https://campaigns.example.com',
        LOG_LEVEL: 'warn',
        ...(process.env.SQLITE_CACHE_MB ? { SQLITE_CACHE_MB: process.env.SQLITE_CACHE_MB } : {}),
        ...workerEnv(),
      }, true, (process.env.WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean)));
    }
    const pids = workers.map((w) => w.child.pid!);
    let firstAt = 0;
    const peakRss = pids.map(() => 0);
    const sendingRss = pids.map(() => 0);
    /** Each worker's RSS once a quarter of the messages were out, and its peak after that: flat when they agree. */
    const quarterRss: number[] = [];
    const afterQuarterRss = pids.map(() => 0);
    for (;;) {
      await sleep(200);
      const sent = (await sink.count()) - before;
      pids.forEach((pid, i) => {
        peakRss[i] = Math.max(peakRss[i], rssOf(pid, 'VmHWM'));
        const rss = rssOf(pid, 'VmRSS');
        if (firstAt) sendingRss[i] = Math.max(sendingRss[i], rss);
        if (quarterRss.length === pids.length) afterQuarterRss[i] = Math.max(afterQuarterRss[i], rss);
      });
      if (quarterRss.length === 0 && sent >= recipients / 4) quarterRss.push(...pids.map((pid) => rssOf(pid, 'VmRSS')));
      if (!firstAt && sent > 0) firstAt = Date.now();
      const send = await db('single_sends').where({ id: sendId }).first('status', 'delivered');
      if (Number(send.status) === 3) break;
      const gone = workers.find((w) => w.child.exitCode !== null);
      if (gone) throw new Error(`worker exited: ${gone.output()}`);
    }
    const end = Date.now();
    pids.forEach((pid, i) => (peakRss[i] = Math.max(peakRss[i], rssOf(pid, 'VmHWM'))));
    const cpu = pids.reduce((sum, pid) => sum + cpuSecondsOf(pid), 0);
    const delivered = Number((await db('single_sends').where({ id: sendId }).first('delivered')).delivered);
    const received = (await sink.count()) - before;
    const total = (end - start) / 1000;
    const sending = (end - firstAt) / 1000;
    const links = await db('send_links').where({ single_send_id: sendId }).count({ n: '*' }).first();
    console.log(`click tracking: on, ${Number(links?.n)} tracked links per message (stored once for the send)`);
    console.log(`send: ${delivered} delivered (${received} received by the sink) in ${total.toFixed(1)} s from worker start`);
    console.log(`      worker start + expansion until the first message: ${((firstAt - start) / 1000).toFixed(1)} s`);
    console.log(`rate: ${(delivered / sending).toFixed(0)} msgs/s while sending, ${(delivered / total).toFixed(0)} msgs/s overall`);
    const after = await bareNodemailer(sink.port, ceilingCount, await newsletterHtml(db));
    console.log(`ceiling again after the send: ${after.toFixed(0)} msgs/s`);
    const ratio = delivered / sending / ((ceiling + after) / 2);
    const target = !database.databaseUrl && workerCount === 1 ? TARGETS.send : database.databaseUrl && workerCount === 2 ? TARGETS.sendPostgresTwoWorkers : undefined;
    const kind = database.databaseUrl ? 'PostgreSQL' : 'SQLite';
    console.log(target ? beside(target, ratio) : `send rate / bare nodemailer (${kind}, ${workerCount} workers): ${ratio.toFixed(2)}× (no target for this database and number of workers)`);
    const mib = (kib: number) => `${(kib / 1024).toFixed(0)} MiB`;
    console.log(`worker CPU: ${cpu.toFixed(1)} s (boot included${workerCount > 1 ? `, ${workerCount} workers together` : ''}), ${((1e6 * cpu) / delivered).toFixed(0)} µs per message; on a busy machine the figure that moves least`);
    pids.forEach((_, i) => {
      const name = workerCount > 1 ? `worker ${i + 1}` : 'worker';
      const flat = quarterRss.length ? `; ${mib(quarterRss[i])} a quarter into the send, at most ${mib(afterQuarterRss[i])} after (growth ${mib(Math.max(0, afterQuarterRss[i] - quarterRss[i]))})` : '';
      console.log(`${name} RSS: peak ${mib(sendingRss[i])} while sending; high-water mark ${mib(peakRss[i])} (boot included)${flat}`);
    });
    console.log(`uptime: ${execSync('uptime').toString().trim()}`);
  } finally {
    for (const w of workers) w.child.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.exited));
    await db.destroy();
    await database.drop();
    await sink.stop();
  }
}

interface Sink {
  port: number;
  count(): Promise<number>;
  stop(): Promise<void>;
}

async function startSink(): Promise<Sink> {
  const child: ChildProcess = fork(path.join(__dirname, 'smtp-sink.ts'), [], { execArgv: ['-r', '@swc-node/register'] });
  const port = await new Promise<number>((resolve) => child.once('message', (m: { port: number }) => resolve(m.port)));
  return {
    port,
    count: () =>
      new Promise((resolve) => {
        child.once('message', (m: { count: number }) => resolve(m.count));
        child.send('count');
      }),
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.send('stop');
      }),
  };
}

/** The sender's ceiling: nodemailer alone, same pool and concurrency, same sink, similar HTML. */
async function bareNodemailer(port: number, count: number, html: string): Promise<number> {
  const transporter = nodemailer.createTransport({ host: '127.0.0.1', port, pool: true, maxConnections: 5, maxMessages: Infinity } as never);
  const start = Date.now();
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      await transporter.sendMail({
        from: { name: 'Acme News', address: 'news@acme.example' },
        to: `r${i}@bench.example`,
        subject: `Hello Name ${i}`,
        html,
        text: 'Hello',
        headers: { 'List-Unsubscribe': '<https://campaigns.example.com/unsubscribe/x>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
      });
    }
  };
  await Promise.all(Array.from({ length: 10 }, lane));
  transporter.close();
  return count / ((Date.now() - start) / 1000);
}

async function newsletterHtml(db: Db): Promise<string> {
  return String((await db('design_templates').where({ id: NEWSLETTER_TEMPLATE_ID }).first('html_code')).html_code);
}

/** The newsletter with three more links before its end, all of them click-tracked. */
function withLinks(html: string): string {
  const links = ['https://shop.example/new', 'https://shop.example/sale?utm_source=news&amp;utm_medium=email', 'https://blog.example/post/42']
    .map((url, i) => `<p><a href="${url}">Link ${i + 1}</a></p>`)
    .join('');
  const end = html.search(/<\/body\s*>/i);
  return end >= 0 ? html.slice(0, end) + links + html.slice(end) : html + links;
}



/** WORKER_ENV="NAME=value …": more environment for the worker (MALLOC_ARENA_MAX=2, say). */
function workerEnv(): Record<string, string> {
  return Object.fromEntries((process.env.WORKER_ENV ?? '').split(' ').filter(Boolean).map((pair) => {
    const at = pair.indexOf('=');
    if (at < 1) throw new Error(`WORKER_ENV: "${pair}" is not NAME=value`);
    return [pair.slice(0, at), pair.slice(at + 1)];
  }));
}

function rssOf(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** User + system CPU seconds a process has used (/proc/<pid>/stat, in clock ticks of 1/100 s). */
function cpuSecondsOf(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
