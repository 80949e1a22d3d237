import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { insertId, jsonValue, nowValue } from '../../src/db/dialect';
import { emailKey } from '../../src/lib/email-key';
import { createSigner, TOKEN_PURPOSE } from '../../src/lib/signed-token';
import { createMailTransport } from '../../src/mail/transport';
import { workerHooks } from '../../src/workers/event-hooks';
import { createSendingWorker, WorkerHooks, WorkerOptions } from '../../src/workers/send-worker';
import type { Harness, TestAccount } from './harness';

/*
 * The suite's fixtures, of two kinds.
 * - `add…(h, account, …)` make a record the way a client does, through the API or the service
 *   behind it, with fresh values each time.
 * - `sendingFixtures(h)` writes rows straight into the database: the fixed values the sending
 *   tests read back in the mail (sender, subject, body), and the state a test starts from (a send
 *   due now, a live automation, thousands of contacts) in one step where the API takes several.
 * - `testWorker`, `manualClock` and `header` send what is due and read what arrived.
 */

/** A `utr`: a version 4 UUID. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** `sent_at`, `live_at`, `send_at`: `YYYY-MM-DD HH:MM:SS`. */
export const PLAIN_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

const stamp = () => ({ created_at: nowValue(), updated_at: nowValue() });

// Geography (seeded)

export async function countryId(h: Harness, iso2: string): Promise<number> {
  const row = await h.runtime.db('countries').where({ iso2 }).first('id');
  return Number(row.id);
}

export interface Place {
  countryId: number;
  stateId: number;
  cityId: number;
  /** A state of another country. */
  foreignStateId: number;
}

/** Germany / Berlin / a Berlin city, and a French state, looked up in the seeded geography. */
export async function berlin(h: Harness): Promise<Place> {
  const db = h.runtime.db;
  const germany = await countryId(h, 'DE');
  const state = await db('states').where({ country_id: germany, iso2: 'BE' }).first('id');
  const city = await db('cities').where({ state_id: state.id }).orderBy('id').first('id');
  const foreign = await db('states').where({ country_id: await countryId(h, 'FR') }).orderBy('id').first('id');
  return { countryId: germany, stateId: state.id, cityId: city.id, foreignStateId: foreign.id };
}

// Audience

/** A contact type of the account, through the service the API calls. */
export async function addContactType(h: Harness, account: Pick<TestAccount, 'user_id'>, name = 'Customers'): Promise<number> {
  return h.runtime.services.contactTypes.add({ userId: account.user_id }, { name });
}

/** A custom field of the account, through the fields API. */
export async function addCustomField(h: Harness, account: TestAccount, fieldName: string, fieldType: 'text' | 'number' | 'datetime-local'): Promise<void> {
  await h.api(account).post('/custom-fields/save').field('field_name', fieldName).field('field_type', fieldType).expect(200);
}

/** Adds a contact through the API and returns its id. */
export async function addContact(h: Harness, account: TestAccount, fields: Record<string, unknown>): Promise<number> {
  const res = await h.api(account).post('/contacts/add').send(fields);
  if (res.status !== 200) throw new Error(`add contact failed: ${res.status} ${JSON.stringify(res.body)}`);
  const row = await h.runtime.db('contacts').where({ user_id: account.user_id, email_key: emailKey(String(fields.email)) }).whereNull('deleted_at').first('id');
  return Number(row.id);
}

/**
 * A segment whose members are exactly `members`, written as rows: its one rule matches no contact
 * (every contact has an email), and members stored by hand stay through the refresh that runs
 * before each send.
 */
export async function addSegment(
  h: Harness,
  account: TestAccount,
  contactTypeId: number,
  name = 'Recent',
  members: Array<{ email: string; contact_id?: number; first_name?: string }> = [],
): Promise<number> {
  const db = h.runtime.db;
  const id = await insertId(db, 'segments', {
    user_id: account.user_id,
    contact_type_id: contactTypeId,
    segment_name: name,
    select_field: jsonValue(['email']),
    select_operator: jsonValue(['is']),
    value: jsonValue(['']),
    query_type: 'and',
    ...stamp(),
  });
  for (const m of members) {
    await db('segment_recipients').insert({
      user_id: account.user_id,
      segment_id: id,
      contact_id: m.contact_id ?? null,
      source: 'manual',
      first_name: m.first_name ?? '',
      email: m.email,
      email_key: emailKey(m.email),
      ...stamp(),
    });
  }
  return id;
}

// Senders and unsubscribe groups

let senderSeq = 0;

export function senderFields(place: Place, overrides: Record<string, string> = {}): Record<string, string> {
  senderSeq += 1;
  return {
    from_name: 'News Desk',
    from_email: `news${senderSeq}@example.com`,
    reply_to_email: 'replies@example.com',
    country_id: String(place.countryId),
    state_id: String(place.stateId),
    city_id: String(place.cityId),
    zip_code: '10115',
    company_address: 'Unter den Linden 1',
    company_address2: 'Floor 2',
    nickname: `desk-${senderSeq}`,
    ...overrides,
  };
}

/** Saves a sender through the API and returns its id (the newest of the account). */
export async function addSender(h: Harness, account: TestAccount, place: Place, overrides: Record<string, string> = {}): Promise<number> {
  await h.api(account).post('/sender/save').type('form').send(senderFields(place, overrides)).expect(200);
  const list = await h.api(account).get('/senders').expect(200);
  return list.body.message.senders[0].id;
}

/**
 * A verified sender. The verification link itself is exercised in test/api/senders.test.ts;
 * other files mark the sender verified directly to stay fast and independent of mail.
 */
export async function addVerifiedSender(h: Harness, account: TestAccount, place: Place, overrides: Record<string, string> = {}): Promise<number> {
  const id = await addSender(h, account, place, overrides);
  await h.runtime.db('senders').where({ id }).update({ is_verified: 1, verify_token_hash: null });
  return id;
}

/** The token of the verification link in a mail's text. */
export function verificationToken(text: string | undefined): string {
  const match = /\/verify-sender\/([\w-]+)/.exec(text ?? '');
  if (!match) throw new Error(`no verification link in: ${text}`);
  return match[1];
}

export async function addGroup(h: Harness, account: TestAccount, name = 'Newsletter'): Promise<number> {
  await h.api(account).post('/unsubscribes-groups/save').type('form').send({ group_name: name, description: 'd', is_display: 1 }).expect(200);
  const list = await h.api(account).get('/unsubscribes-groups').expect(200);
  return list.body.message.unsubscribesGroups[0].id;
}

/**
 * What the composer's pickers offer, made through the services: a verified sender "News —
 * news@acme.example" (with `sender` on top), an unsubscribe group "Newsletter" and a contact type.
 */
export async function newsDesk(
  h: Harness,
  account: TestAccount,
  contactType: string,
  sender: Record<string, string> = {},
): Promise<{ ctx: { userId: number }; sender: number; group: number; type: number }> {
  const ctx = { userId: account.user_id };
  const senderId = await addVerifiedSender(h, account, await berlin(h), { nickname: 'News', from_email: 'news@acme.example', ...sender });
  const group = await h.runtime.services.unsubscribeGroups.add(ctx, { group_name: 'Newsletter', description: 'News', is_display: 1 });
  return { ctx, sender: senderId, group, type: await h.runtime.services.contactTypes.add(ctx, { name: contactType }) };
}

// Single sends and automations through the API

/** Everything a single send or an automation of one account can point at. */
export interface Audience {
  senderId: number;
  groupId: number;
  contactTypeId: number;
  segmentId: number;
}

export async function audienceOf(h: Harness, account: TestAccount, place: Place): Promise<Audience> {
  const senderId = await addVerifiedSender(h, account, place);
  const groupId = await addGroup(h, account);
  const contactTypeId = await addContactType(h, account);
  const segmentId = await addSegment(h, account, contactTypeId);
  return { senderId, groupId, contactTypeId, segmentId };
}

/** A valid single-send body (JSON) for the audience, with overrides. */
export function singleSendBody(a: Audience, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    template_id: 2,
    sender_id: a.senderId,
    unsubscribe_group_id: a.groupId,
    single_send_name: 'November news',
    subject: 'News for ((first_name))',
    preheader: 'What happened this month',
    recipient_id: [`contacts_${a.contactTypeId}`, `segments_${a.segmentId}`],
    schedule_type: 0,
    ...overrides,
  };
}

/** Creates an automation through the API and returns its utr. */
export async function addAutomation(h: Harness, account: TestAccount, fields: Record<string, unknown>): Promise<string> {
  const res = await h.api(account).post('/automations/create').send({ type: 'welcome', automation_name: 'Onboarding', ...fields }).expect(200);
  return res.body.message.utr;
}

/** A valid schedule body for the automation `utr`. */
export function scheduleBody(utr: string, senderId: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    utr,
    sender_id: senderId,
    subject: 'Welcome, ((first_name))',
    waiting_period: 1,
    waiting_type: 'instantly',
    template_id: 4,
    preview_img: 'welcome.png',
    ...overrides,
  };
}

// Rows for the sending tests

/** What a send of the account needs: a verified sender and an unsubscribe group, and a contact type when named. */
export interface SendingBasics {
  sender: number;
  group: number;
}

/** Rows written straight into the database (see the top of this file for why). */
export function sendingFixtures(h: Harness) {
  const db = (): Knex => h.runtime.db;

  function basics(account: Pick<TestAccount, 'user_id'>): Promise<SendingBasics>;
  function basics(account: Pick<TestAccount, 'user_id'>, contactType: string): Promise<SendingBasics & { type: number }>;
  async function basics(account: Pick<TestAccount, 'user_id'>, contactType?: string): Promise<SendingBasics & { type?: number }> {
    const sender = await fixtures.sender(account.user_id);
    const group = await fixtures.group(account.user_id);
    return contactType === undefined ? { sender, group } : { sender, group, type: await addContactType(h, account, contactType) };
  }

  const fixtures = {
    basics,

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

    /** The utr the API names a fixture's row by (an automation, a step, a send). */
    async utrOf(table: 'automations' | 'automation_schedules' | 'single_sends', id: number): Promise<string> {
      return String((await db()(table).where({ id }).first('utr')).utr);
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
  return fixtures;
}

export interface SendingSetup extends SendingBasics {
  account: TestAccount;
  /** The contact type named in the call (0 when none was). */
  type: number;
}

/**
 * An account with what its sends need (`sendingFixtures(h).basics`), for the whole describe block:
 * call beside useHarness; the object is filled in a beforeAll registered by this call.
 */
export function useSendingSetup(h: Harness, contactType?: string): SendingSetup {
  const [account] = h.accounts(1);
  const setup = { account, sender: 0, group: 0, type: 0 };
  beforeAll(async () => {
    Object.assign(setup, contactType === undefined ? await sendingFixtures(h).basics(account) : await sendingFixtures(h).basics(account, contactType));
  });
  return setup;
}

/** A worker against the test database, sending to `smtpUrl`; `close()` stops it and its pool. */
export function testWorker(h: Harness, smtpUrl: string, options: WorkerOptions = {}, hooks: WorkerHooks = workerHooks(h.runtime.services)) {
  const transport = createMailTransport({ smtpUrl, outboxDir: '', dkim: undefined });
  const worker = createSendingWorker(
    { db: h.runtime.db, config: { ...h.runtime.config, mailRate: 0 }, logger: h.runtime.logger, secret: h.runtime.secret, transport, hooks },
    options,
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
