import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Db } from '../../src/db';
import { insertId, jsonValue, nowValue } from '../../src/db/dialect';
import { adminDb, withDatabase } from '../../test/support/test-db';

/** The stock design bench:send's message is made from. */
export const NEWSLETTER_TEMPLATE_ID = 2;

/** What bench:send and bench:tx set up: an account, its contacts and a ready single send of `html`. */
export async function createSend(db: Db, recipients: number, html: string): Promise<number> {
  const now = nowValue();
  const stamp = { created_at: now, updated_at: now };
  const userId = await insertId(db, 'accounts', {
    name: 'Bench', email: 'bench@example.com', email_key: 'bench@example.com', password_hash: 'x',
    public_key: `pk_${crypto.randomBytes(8).toString('hex')}`, secret_key_hash: 'x', ...stamp,
  });
  const senderId = await insertId(db, 'senders', {
    user_id: userId, from_name: 'Acme News', from_email: 'news@acme.example', reply_to_email: 'reply@acme.example',
    country_id: 0, company_address: '1 Main Street', nickname: 'news', is_verified: 1, utr: crypto.randomBytes(8).toString('hex'), ...stamp,
  });
  const groupId = await insertId(db, 'unsubscribe_groups', { user_id: userId, rand_id: 'bench', group_name: 'News', description: 'News', is_display: 1, ...stamp });
  const typeId = await insertId(db, 'contact_types', { user_id: userId, name: 'Everyone', ...stamp });
  const rows = (from: number, to: number) =>
    Array.from({ length: to - from }, (_, k) => ({
      user_id: userId, contact_type_id: typeId, first_name: `Name ${from + k}`, last_name: 'Bench',
      email: `r${from + k}@bench.example`, email_key: `r${from + k}@bench.example`,
      custom_fields: jsonValue({ company_name: `Company ${(from + k) % 1000}` }), ...stamp,
    }));
  await db.transaction(async (trx) => {
    for (let i = 0; i < recipients; i += 400) await trx('contacts').insert(rows(i, Math.min(recipients, i + 400)));
  });
  return insertId(db, 'single_sends', {
    user_id: userId, template_id: NEWSLETTER_TEMPLATE_ID, sender_id: senderId, unsubscribe_group_id: groupId,
    recipient_id: jsonValue([{ id: String(typeId), table: 'contacts_' }]), exclude_specific_recipient_id: jsonValue([]),
    single_send_name: 'Bench', from_sender: 'news@acme.example', reply_to: 'reply@acme.example', sender_name: 'Acme News',
    subject: 'Hello ((first_name))', preheader: 'News for ((full_name)) at ((company_name))', schedule_type: 0,
    due_at: now, status: 1, utr: crypto.randomUUID(), template_html: html, track_opens: 1, track_clicks: 1, ...stamp,
  });
}

/** A fresh SQLite file, or a fresh database on DATABASE_URL's server; dropped afterwards. */
export async function scratchDatabase(): Promise<{ databaseUrl: string | undefined; sqliteFile: string; drop(): Promise<void> }> {
  const base = process.env.DATABASE_URL;
  if (!base) {
    const file = path.join(os.tmpdir(), `bench-send-${process.pid}.sqlite3`);
    return {
      databaseUrl: undefined,
      sqliteFile: file,
      drop: async () => {
        for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
      },
    };
  }
  const name = `bench_send_${process.pid}`;
  const admin = adminDb(base);
  await admin.raw(`create database ${name}`);
  await admin.destroy();
  return {
    databaseUrl: withDatabase(base, name),
    sqliteFile: '',
    drop: async () => {
      const dropper = adminDb(base);
      await dropper.raw(`drop database if exists ${name} with (force)`);
      await dropper.destroy();
    },
  };
}
