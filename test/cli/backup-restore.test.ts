import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import crypto from 'node:crypto';
import request from 'supertest';
import { boot, Runtime } from '../../src/boot';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { MESSAGE_STATE } from '../../src/lib/constants';
import { useHarness, Harness, TestAccount } from '../support/harness';
import { addContactType, addCustomField, addGroup, addSegment, addVerifiedSender, berlin, sendingFixtures, testWorker } from '../support/fixtures';
import { startSmtpSink, SmtpSink } from '../support/smtp';
import { runTs } from '../support/spawn-ts';
import { until } from '../support/processes';
import { adminDb, runId, TMP_DIR, withDatabase } from '../support/test-db';
import { backupSignature } from '../../src/lib/backup-file';

/*
 * The operator's backup: `cli backup` while a send is under way, `cli restore` into an empty
 * database of each kind, and the service carrying on there as if nothing happened. Restores into
 * SQLite always; into PostgreSQL when DATABASE_URL (the PostgreSQL run) or
 * RESTORE_TEST_DATABASE_URL (a server for a SQLite run to restore into) names a server.
 */
const SECRET = 'backup-restore-test-secret-0123456789abcdef';
const RECIPIENTS = 20;
/** Messages the first life's mail server accepts before it stops answering (the machine dies mid-send). */
const ACCEPTED_BEFORE_BACKUP = 5;
const LISTS = [
  '/contacts-type',
  '/contacts/list?per_page=100',
  '/custom-fields',
  '/segment/list',
  '/senders',
  '/unsubscribes-groups',
  '/global-unsubscribes',
  '/suppressions',
  '/notification-recipients',
  '/webhooks',
  '/automations',
  '/single-send/list',
];
const PG_BASE = process.env.DATABASE_URL || process.env.RESTORE_TEST_DATABASE_URL || undefined;

interface Target {
  kind: 'sqlite' | 'postgres';
  env: Record<string, string>;
  drop(): Promise<void>;
}

let targetSeq = 0;

/** A new, empty database of `kind` (nothing run on it). */
async function emptyTarget(kind: 'sqlite' | 'postgres'): Promise<Target> {
  targetSeq += 1;
  const name = `cc_r_${runId()}_${process.pid}_${targetSeq}`;
  if (kind === 'sqlite') {
    const file = path.join(TMP_DIR, `${name}.sqlite3`);
    return {
      kind,
      env: { DATABASE_URL: '', SQLITE_FILE: file, DATA_DIR: path.join(TMP_DIR, `${name}_data`) },
      drop: async () => {
        for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
        fs.rmSync(path.join(TMP_DIR, `${name}_data`), { recursive: true, force: true });
      },
    };
  }
  const admin = adminDb(PG_BASE!);
  try {
    await admin.raw(`create database ${name}`);
  } finally {
    await admin.destroy();
  }
  return {
    kind,
    env: { DATABASE_URL: withDatabase(PG_BASE!, name), DATA_DIR: path.join(TMP_DIR, `${name}_data`) },
    drop: async () => {
      const admin2 = adminDb(PG_BASE!);
      try {
        await admin2.raw(`drop database if exists ${name} with (force)`);
      } finally {
        await admin2.destroy();
      }
    },
  };
}

const cli = (args: string[], env: Record<string, string>) => runTs('src/cli.ts', args, { LOG_LEVEL: 'silent', APP_SECRET: SECRET, ...env });

/** The source database's connection settings, for the CLI. */
function sourceEnv(h: Harness): Record<string, string> {
  const { databaseUrl, sqliteFile, dataDir } = h.runtime.config;
  return databaseUrl ? { DATABASE_URL: databaseUrl, DATA_DIR: dataDir } : { DATABASE_URL: '', SQLITE_FILE: sqliteFile, DATA_DIR: dataDir };
}

async function lists(app: Runtime['app'], account: TestAccount): Promise<Record<string, unknown>> {
  const answers: Record<string, unknown> = {};
  for (const list of LISTS) {
    const res = await request(app).get(`/api/v1${list}`).set(account.headers);
    expect({ list, status: res.status }).toEqual({ list, status: 200 });
    answers[list] = res.body;
  }
  return answers;
}

/**
 * How a rewritten backup's last lines are made to match: `none` leaves them; `rehashed` computes
 * every table's sha256 and the whole file's again, as anyone editing a file can; `signed` also
 * signs it with an app secret, as only an install holding that secret can.
 */
type Seal = 'none' | 'rehashed' | { signedWith: string };

/** Rewrites a backup's lines with `change` and writes it gzipped again, sealed as `seal` says. */
function rewrite(from: string, to: string, change: (lines: string[]) => string[], seal: Seal): void {
  let lines = zlib.gunzipSync(fs.readFileSync(from)).toString('utf8').split('\n').filter(Boolean);
  lines = change(lines);
  if (seal !== 'none') {
    let table: crypto.Hash | undefined;
    for (let i = 1; i < lines.length - 1; i += 1) {
      const value = JSON.parse(lines[i]);
      if (Array.isArray(value)) table!.update(`${lines[i]}\n`);
      else if (value.table) table = crypto.createHash('sha256');
      else if (value.end) lines[i] = JSON.stringify({ ...value, sha256: table!.digest('hex') });
    }
    const whole = seal === 'rehashed' ? crypto.createHash('sha256') : backupSignature(seal.signedWith);
    for (const line of lines.slice(0, -1)) whole.update(`${line}\n`);
    const last = JSON.parse(lines[lines.length - 1]);
    lines[lines.length - 1] = JSON.stringify({ ...last, [seal === 'rehashed' ? 'sha256' : 'hmac']: whole.digest('hex') });
  }
  fs.writeFileSync(to, zlib.gzipSync(lines.map((l) => `${l}\n`).join('')));
}

describe('backup and restore', () => {
  // The first life's mail server takes a few of the send's messages, then holds every later one unanswered.
  let held = 0;
  let firstSink: SmtpSink;
  beforeAll(async () => {
    firstSink = await startSmtpSink({
      beforeAccept: async (session) => {
        if (!session.envelope.rcptTo.some((r) => r.address.endsWith('@backup.test'))) return;
        if (held++ >= ACCEPTED_BEFORE_BACKUP) await new Promise<void>(() => undefined);
      },
    });
  });
  const h = useHarness({ APP_SECRET: SECRET, WEBHOOK_ALLOW_PRIVATE: '1' });
  const backupFile = () => path.join(TMP_DIR, `backup_${runId()}_${process.pid}.ndjson.gz`);

  let account: TestAccount;
  let sendId: number;
  let session: string;
  let before: Record<string, unknown>;
  const addresses = Array.from({ length: RECIPIENTS }, (_, i) => `reader${i}@backup.test`);

  afterAll(async () => {
    await firstSink?.close();
    fs.rmSync(backupFile(), { force: true });
  });

  test('when a send is under way then the backup writes one consistent snapshot while the worker goes on', async () => {
    account = await h.account();
    const api = h.api(account);
    const f = sendingFixtures(h);
    const place = await berlin(h);
    const typeId = await addContactType(h, account, 'Readers');
    await addCustomField(h, account, 'plan', 'text');
    for (const [i, email] of addresses.entries()) await f.contact(account.user_id, typeId, email, { first_name: `Reader ${i}`, custom_fields: { plan: i % 2 ? 'pro' : 'free' } });
    await addSegment(h, account, typeId, 'Pro readers', [{ email: addresses[1], first_name: 'Reader 1' }]);
    const senderId = await addVerifiedSender(h, account, place);
    const groupId = await addGroup(h, account);
    await api.post('/global-unsubscribes/save').send({ email_address: 'gone@elsewhere.test' }).expect(200);
    await api.post('/suppressions/save').send({ email_address: 'bounced@elsewhere.test' }).expect(200);
    await api.post('/notification-recipient/save').send({ email_address: 'ops@elsewhere.test', email_owner: 'Ops' }).expect(200);
    await api.post('/webhooks/save').send({ url: 'http://127.0.0.1:9/hook', events: ['contact.created'] }).expect(200);
    await api.post('/automations/create').send({ type: 'welcome', automation_name: 'Onboarding', automation_for: typeId, automation_for_table: 'contacts_', unsubscribe_group_id: groupId });
    session = (await h.runtime.services.sessions.create(await h.runtime.services.teamUsers.owner(account.user_id))).token;
    sendId = await f.singleSend(account.user_id, { senderId, groupId, to: [{ contactType: typeId }] });

    const first = testWorker(h, firstSink.url, { leaseMs: 1500, batchSize: 5 });
    first.worker.start();
    try {
      // The state to back up in: some messages sent and recorded, others in flight, the rest queued.
      await until(async () => {
        const sent = await h.runtime.db('send_messages').where({ single_send_id: sendId, state: MESSAGE_STATE.sent }).count({ n: '*' }).first();
        return Number(sent?.n) === ACCEPTED_BEFORE_BACKUP && held > ACCEPTED_BEFORE_BACKUP;
      }, 20_000, 'the first messages sent and the next ones in flight');
      before = await lists(h.runtime.app, account);

      const result = await cli(['backup', '--out', backupFile()], sourceEnv(h));
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toMatch(/^backup of \d+ tables, \d+ rows \(schema \d{8}_\d{4}_[\w-]+\) written to /);
    } finally {
      // The first life ends: its mail server goes away with the messages it held unanswered.
      await firstSink.close();
      await first.close();
    }
    const header = JSON.parse(zlib.gunzipSync(fs.readFileSync(backupFile())).toString('utf8').split('\n')[0]);
    expect(header).toMatchObject({ format: 'campaign-service-backup', version: 2, schema: expect.any(String), source: h.runtime.config.databaseUrl ? 'postgres' : 'sqlite' });
    expect(firstSink.messages.filter((m) => m.to[0].endsWith('@backup.test'))).toHaveLength(ACCEPTED_BEFORE_BACKUP);
  }, 120_000);

  const kinds: Array<'sqlite' | 'postgres'> = PG_BASE ? ['sqlite', 'postgres'] : ['sqlite'];
  test.each(kinds)('when the backup is restored into an empty %s database then the service carries on there: same lists, same keys and sessions, the send finishes mailing everyone once', async (kind) => {
    const target = await emptyTarget(kind);
    const sink = await startSmtpSink();
    let runtime: Runtime | undefined;
    try {
      const result = await cli(['restore', '--in', backupFile()], target.env);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toMatch(new RegExp(`^restored \\d+ tables, \\d+ rows \\(schema [\\w-]+\\) into ${kind}; row counts checked\\n$`));

      runtime = await boot(
        loadConfig({ ...target.env, LOG_LEVEL: 'silent', API_RATE_LIMIT: '0', BASE_URL: 'http://campaigns.test', APP_SECRET: SECRET }),
        createLogger('silent'),
      );
      // The original keys answer, with the same lists; the dashboard session still signs in.
      expect(await lists(runtime.app, account)).toEqual(before);
      expect(await runtime.services.sessions.resolve(session)).toMatchObject({ account: { id: account.user_id } });
      // A new row takes a new id (PostgreSQL's sequences were moved past the restored ids).
      const typeId = await runtime.services.contactTypes.add({ userId: account.user_id }, { name: 'After the move' });
      const ids = (await runtime.db('contact_types').select('id')).map((r) => Number(r.id));
      expect(typeId).toBe(Math.max(...ids));

      const second = testWorker({ runtime } as Harness, sink.url, { leaseMs: 1500 });
      second.worker.start();
      try {
        await until(async () => {
          const open = await runtime!.db('send_messages').where({ single_send_id: sendId }).whereIn('state', [MESSAGE_STATE.queued, MESSAGE_STATE.sending]).count({ n: '*' }).first();
          return Number(open?.n) === 0;
        }, 30_000, 'the interrupted send to finish');
      } finally {
        await second.close();
      }
      const mailed = [...firstSink.messages, ...sink.messages].flatMap((m) => m.to).filter((to) => to.endsWith('@backup.test'));
      expect(mailed.sort()).toEqual([...addresses].sort());
      const details = await request(runtime.app).get('/api/v1/single-send/list').set(account.headers).expect(200);
      expect(JSON.stringify(details.body)).toContain(`"delivered":${RECIPIENTS}`);
    } finally {
      await runtime?.close();
      await sink.close();
      await target.drop();
    }
  }, 120_000);

  test('when the target database is not empty then the restore is refused and writes nothing', async () => {
    const result = await cli(['restore', '--in', backupFile()], sourceEnv(h));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^restore refused: the target database is not empty \(table \w+ has rows\): restore into a new, empty database\n$/);
    await request(h.runtime.app).get('/api/v1/contacts-type').set(account.headers).expect(200);
  }, 60_000);

  test.each([
    ['cut in half', (file: string, bad: string) => fs.writeFileSync(bad, fs.readFileSync(file).subarray(0, Math.floor(fs.statSync(file).size / 2))), /not an intact backup: the compressed data is truncated or corrupted/],
    ['missing its last line', (file: string, bad: string) => rewrite(file, bad, (lines) => lines.slice(0, -1), 'none'), /not an intact backup: it is truncated/],
    ['with a changed row', (file: string, bad: string) => rewrite(file, bad, (lines) => lines.map((l) => l.replace('reader3@backup.test', 'mallory@backup.test')), 'none'), /not an intact backup: the rows of table \w+ do not match their checksum/],
    ['with a changed row and every checksum computed again', (file: string, bad: string) => rewrite(file, bad, (lines) => lines.map((l) => l.replace('reader3@backup.test', 'mallory@backup.test')), 'rehashed'), /cannot be trusted: its signature does not match this install's app secret: the file was changed after it was written, or it was written by an install with another app secret/],
    ['signed with another install\'s app secret', (file: string, bad: string) => rewrite(file, bad, (lines) => lines, { signedWith: 'another-install-secret-0123456789abcdef' }), /cannot be trusted: its signature does not match this install's app secret/],
    ['claiming an older schema than its rows have', (file: string, bad: string) => rewrite(file, bad, (lines) => {
      const header = JSON.parse(lines[0]);
      lines[0] = JSON.stringify({ ...header, schema: header.migrations[0], migrations: header.migrations.slice(0, 1) });
      return lines;
    }, { signedWith: SECRET }), /^restore refused: the backup says its schema is \d{8}_\d{4}_[\w-]+, but (its table \w+ has a column \w+|it has a table \w+) that this schema does not have: its rows do not fit the schema it names, so it cannot be loaded\. Nothing was written\.\n$/],
    ['with a changed byte in its compressed data', (file: string, bad: string) => {
      const bytes = Buffer.from(fs.readFileSync(file));
      bytes[Math.floor(bytes.length / 3)] ^= 0xff;
      fs.writeFileSync(bad, bytes);
    }, /not an intact backup: /],
    ['from a newer schema', (file: string, bad: string) => rewrite(file, bad, (lines) => {
      const header = JSON.parse(lines[0]);
      lines[0] = JSON.stringify({ ...header, schema: '20991231_0000_from-the-future', migrations: [...header.migrations, '20991231_0000_from-the-future'] });
      return lines;
    }, { signedWith: SECRET }), /the backup's schema \(20991231_0000_from-the-future\) is newer than this build's/],
  ])('when the file is %s then the restore is refused in one line and writes nothing', async (_what, spoil, message) => {
    const bad = `${backupFile()}.bad`;
    spoil(backupFile(), bad);
    const target = await emptyTarget('sqlite');
    try {
      const result = await cli(['restore', '--in', bad], target.env);
      expect(result.code).toBe(1);
      expect(result.stderr.split('\n').filter(Boolean)).toHaveLength(1);
      expect(result.stderr).toMatch(message);
      expect(fs.existsSync(target.env.SQLITE_FILE) ? fs.statSync(target.env.SQLITE_FILE).size : 0).toBe(0);
    } finally {
      fs.rmSync(bad, { force: true });
      await target.drop();
    }
  }, 60_000);
});
