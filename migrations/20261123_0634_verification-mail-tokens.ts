import crypto from 'node:crypto';
import type { Knex } from 'knex';

/**
 * Data only: sender verification mails already in the send ledger kept their link's token in
 * plain text. Each one loses it (`/verify-sender/<token>` becomes `/verify-sender/`); one still
 * waiting to go out whose token is its sender's live one becomes the new kind of payload,
 * whose link is made when it is sent, and is its sender's latest verification mail.
 */
const SYSTEM_KIND = 3;
/** queued, or sending (claimed by a worker that may have died: it comes back). */
const WAITING = [0, 1];
const LINK = /\/verify-sender\/([A-Za-z0-9_-]+)/g;

export async function up(knex: Knex): Promise<void> {
  let after = 0;
  for (;;) {
    const rows: { id: number; user_id: number; state: number; payload: string | null }[] = await knex('send_messages')
      .where({ kind: SYSTEM_KIND })
      .where('id', '>', after)
      .where('payload', 'like', '%/verify-sender/%')
      .orderBy('id')
      .limit(200)
      .select('id', 'user_id', 'state', 'payload');
    if (rows.length === 0) break;
    after = Number(rows[rows.length - 1].id);
    for (const row of rows) {
      const payload = JSON.parse(row.payload ?? '{}') as Record<string, unknown>;
      const tokens = [...String(payload.html ?? '').matchAll(LINK)].map((m) => decodeURIComponent(m[1]));
      const hashes = tokens.map((token) => crypto.createHash('sha256').update(token).digest('hex'));
      const sender = WAITING.includes(Number(row.state)) && hashes.length > 0
        ? await knex('senders').where({ user_id: row.user_id, is_verified: 0 }).whereNull('deleted_at').whereIn('verify_token_hash', hashes).first('id', 'from_name')
        : undefined;
      const scrub = (text: unknown) => (typeof text === 'string' ? text.replace(LINK, '/verify-sender/') : text);
      const next = sender
        ? { from: payload.from, subject: payload.subject, html: '', verifySender: { id: Number(sender.id), from_name: String(sender.from_name) } }
        : { ...payload, html: scrub(payload.html), text: scrub(payload.text) };
      await knex('send_messages').where({ id: row.id }).update({ payload: JSON.stringify(next) });
      if (sender) await knex('senders').where({ id: sender.id }).update({ verify_message_id: row.id });
    }
  }
}

export async function down(): Promise<void> {
  // The tokens are gone for good; that is the point.
}
