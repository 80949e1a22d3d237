import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { insertId, jsonValue, nowValue } from '../../src/db/dialect';
import { emailKey } from '../../src/lib/email-key';
import { createSigner, TOKEN_PURPOSE } from '../../src/lib/signed-token';
import { workerHooks } from '../../src/workers/event-hooks';
import { createMailTransport } from '../../src/mail/transport';
import { createSendingWorker, WorkerHooks, WorkerOptions } from '../../src/workers/send-worker';
import type { Harness } from './harness';

/**
 * Records the sending tests need, written straight into the database until the campaign API
 * (senders, single sends, automations) lands on main; then these become API calls.
 */
export function sendingFixtures(h: Harness) {
  const db = (): Knex => h.runtime.db;
  const stamp = () => ({ created_at: nowValue(), updated_at: nowValue() });

  return {
    async sender(userId: number, over: Record<string, unknown> = {}): Promise<number> {
      return insertId(db(), 'senders', {
        user_id: userId,
        from_name: 'Acme News',
        from_email: 'news@acme.test',
        reply_to_email: 'reply@acme.test',
        country_id: 0,
        company_address: '1 Main Street',
        nickname: 'news',
        is_verified: 1,
        utr: crypto.randomBytes(8).toString('hex'),
        ...stamp(),
        ...over,
      });
    },

    async group(userId: number, name = 'Newsletter', isDisplay = 1): Promise<number> {
      return insertId(db(), 'unsubscribe_groups', {
        user_id: userId,
        rand_id: crypto.randomBytes(6).toString('hex'),
        group_name: name,
        description: `${name} mail`,
        is_display: isDisplay,
        ...stamp(),
      });
    },

    async contactType(userId: number, name: string): Promise<number> {
      return h.runtime.services.contactTypes.add({ userId }, { name });
    },

    async contact(userId: number, contactTypeId: number, email: string, over: Record<string, unknown> = {}): Promise<number> {
      const { custom_fields: custom, ...rest } = over;
      return insertId(db(), 'contacts', {
        user_id: userId,
        contact_type_id: contactTypeId,
        email,
        email_key: emailKey(email),
        custom_fields: jsonValue(custom ?? {}),
        ...stamp(),
        ...rest,
      });
    },

    /** Many contacts at once (first_name = "Name <n>"), in multi-row inserts. */
    async contacts(userId: number, contactTypeId: number, count: number, domain = 'bulk.test'): Promise<void> {
      const rows = Array.from({ length: count }, (_, i) => ({
        user_id: userId,
        contact_type_id: contactTypeId,
        email: `r${i}@${domain}`,
        email_key: `r${i}@${domain}`,
        first_name: `Name ${i}`,
        custom_fields: jsonValue({}),
        ...stamp(),
      }));
      for (let i = 0; i < rows.length; i += 300) await db()('contacts').insert(rows.slice(i, i + 300));
    },

    async segment(userId: number, contactTypeId: number, name: string, members: Array<{ email: string; contact_id?: number; first_name?: string }>): Promise<number> {
      // A rule no contact matches (every contact has an email): the members are exactly the
      // stored ones below, through the refresh that runs before each send.
      const id = await insertId(db(), 'segments', {
        user_id: userId,
        contact_type_id: contactTypeId,
        segment_name: name,
        select_field: jsonValue(['email']),
        select_operator: jsonValue(['is']),
        value: jsonValue(['']),
        query_type: 'and',
        ...stamp(),
      });
      for (const m of members) {
        await db()('segment_recipients').insert({
          user_id: userId,
          segment_id: id,
          contact_id: m.contact_id ?? null,
          // Stored members: a segment without rules keeps them through the refresh before each send.
          source: 'manual',
          first_name: m.first_name ?? '',
          email: m.email,
          email_key: emailKey(m.email),
          ...stamp(),
        });
      }
      return id;
    },

    async globalUnsubscribe(userId: number, email: string): Promise<void> {
      await db()('global_unsubscribes').insert({ user_id: userId, email_address: email, email_key: emailKey(email), ...stamp() });
    },

    async groupUnsubscribe(userId: number, groupId: number, email: string): Promise<void> {
      await db()('unsubscribe_group_recipients').insert({
        user_id: userId,
        unsubscribe_groups_id: groupId,
        email_address: email,
        email_key: emailKey(email),
        ...stamp(),
      });
    },

    /** A saved single send: status 1 and due at `dueAt` (now unless given), as the campaign API saves it. */
    async singleSend(
      userId: number,
      input: {
        senderId: number;
        groupId: number;
        to: Array<{ contactType?: number; segment?: number }>;
        exclude?: Array<{ contactType?: number; segment?: number }>;
        subject?: string;
        preheader?: string;
        html?: string;
        dueAt?: Date;
        status?: number;
      },
    ): Promise<number> {
      const refs = (list: Array<{ contactType?: number; segment?: number }>) =>
        list.map((r) => (r.contactType ? { id: String(r.contactType), table: 'contacts_' } : { id: String(r.segment), table: 'segments_' }));
      const sender = await db()('senders').where({ id: input.senderId }).first();
      const status = input.status ?? 1;
      return insertId(db(), 'single_sends', {
        user_id: userId,
        template_id: 1,
        recipient_id: jsonValue(refs(input.to)),
        exclude_specific_recipient_id: jsonValue(refs(input.exclude ?? [])),
        sender_id: input.senderId,
        unsubscribe_group_id: input.groupId,
        single_send_name: 'November news',
        from_sender: sender.from_email,
        reply_to: sender.reply_to_email,
        sender_name: sender.from_name,
        sender_address: null,
        subject: input.subject ?? 'Hello ((first_name))',
        preheader: input.preheader ?? 'News for ((first_name))',
        schedule_type: input.dueAt ? 1 : 0,
        due_at: status === 1 ? (input.dueAt ?? new Date()).toISOString() : null,
        status,
        utr: crypto.randomUUID(),
        template_html: input.html ?? '<html><body><p>Dear ((first_name)),</p><p>news</p></body></html>',
        ...stamp(),
      });
    },

    /** An automation as the campaign API stores it (status 0 draft, 1 live, 2 paused). */
    async automation(
      userId: number,
      input: { type: 'welcome' | 'custom'; contactType?: number; segment?: number; groupId: number; status?: number },
    ): Promise<number> {
      return insertId(db(), 'automations', {
        user_id: userId,
        automation_for: input.contactType ?? input.segment,
        automation_for_table: input.contactType ? 'contacts_' : 'segments_',
        automation_name: `${input.type} journey`,
        unsubscribe_group_id: input.groupId,
        automation_type: input.type === 'welcome' ? 1 : 2,
        utr: crypto.randomUUID(),
        status: input.status ?? 0,
        ...stamp(),
      });
    },

    async schedule(
      userId: number,
      automationId: number,
      input: { senderId: number; subject: string; waitingPeriod: number; waitingType: 'instantly' | 'days' | 'hours'; html?: string },
    ): Promise<number> {
      return insertId(db(), 'automation_schedules', {
        user_id: userId,
        automation_id: automationId,
        sender_id: input.senderId,
        subject: input.subject,
        waiting_period: input.waitingPeriod,
        waiting_type: input.waitingType,
        utr: crypto.randomUUID(),
        template_id: 1,
        preview_img: 'blank.png',
        template_html: input.html ?? '<html><body><p>Hi ((first_name))</p></body></html>',
        ...stamp(),
      });
    },

    async setAutomationStatus(id: number, status: number): Promise<void> {
      await db()('automations').where({ id }).update({ status, ...(status === 1 ? { live_at: nowValue() } : {}), updated_at: nowValue() });
    },

    async automationRecord(id: number): Promise<Record<string, unknown>> {
      return db()('automations').where({ id }).first();
    },

    async send(id: number): Promise<Record<string, unknown>> {
      return db()('single_sends').where({ id }).first();
    },

    async ledger(sendId: number): Promise<Array<Record<string, unknown>>> {
      return db()('send_messages').where({ single_send_id: sendId }).orderBy('id');
    },

    /** The signed token of a ledger row, as links in its message carry it. */
    token(messageId: number): string {
      return createSigner(h.runtime.secret).sign(TOKEN_PURPOSE.message, messageId);
    },
  };
}

/** A worker against the test database, sending to `smtpUrl`; `close()` stops it and its pool. */
export function testWorker(h: Harness, smtpUrl: string, options: WorkerOptions = {}, hooks: WorkerHooks = workerHooks(h.runtime.services)) {
  const transport = createMailTransport({ smtpUrl, outboxDir: '', dkim: undefined });
  const worker = createSendingWorker(
    { db: h.runtime.db, config: { ...h.runtime.config, mailRate: 0 }, logger: h.runtime.logger, secret: h.runtime.secret, transport, hooks },
    { retryBaseMs: 60_000, ...options },
  );
  return {
    worker,
    async close() {
      await worker.stop();
      transport.close();
    },
  };
}

/** A clock the test moves by hand. */
export function manualClock(start = new Date('2026-11-22T09:00:00.000Z')) {
  let current = start.getTime();
  return {
    now: () => new Date(current),
    advance(ms: number) {
      current += ms;
    },
  };
}

/** A header of a received message, unfolded, or undefined. */
export function header(raw: string, name: string): string | undefined {
  const head = raw.split(/\r?\n\r?\n/)[0].replace(/\r?\n[ \t]+/g, ' ');
  const line = head.split(/\r?\n/).find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line?.slice(name.length + 1).trim();
}
