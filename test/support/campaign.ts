import type { Harness, TestAccount } from './harness';

/** Fixtures for senders, single sends and automations. */

/** A `utr`: a version 4 UUID. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** `sent_at`, `live_at`, `send_at`: `YYYY-MM-DD HH:MM:SS`. */
export const PLAIN_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

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
  const country = await db('countries').where({ iso2: 'DE' }).first('id');
  const state = await db('states').where({ country_id: country.id, iso2: 'BE' }).first('id');
  const city = await db('cities').where({ state_id: state.id }).orderBy('id').first('id');
  const france = await db('countries').where({ iso2: 'FR' }).first('id');
  const foreign = await db('states').where({ country_id: france.id }).orderBy('id').first('id');
  return { countryId: country.id, stateId: state.id, cityId: city.id, foreignStateId: foreign.id };
}

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

export async function addContactType(h: Harness, account: TestAccount, name = 'Customers'): Promise<number> {
  await h.api(account).post('/contacts-type/add').type('form').send({ name }).expect(200);
  const list = await h.api(account).get('/contacts-type').expect(200);
  return list.body.message.contactTypes[0].id;
}

/** A segment row inserted directly: the segment API is built by the audience work. */
export async function addSegment(h: Harness, account: TestAccount, contactTypeId: number, name = 'Recent'): Promise<number> {
  const now = new Date().toISOString();
  const [row] = await h.runtime
    .db('segments')
    .insert({ user_id: account.user_id, contact_type_id: contactTypeId, segment_name: name, query_type: 'and', created_at: now, updated_at: now })
    .returning('id');
  return Number(typeof row === 'object' ? row.id : row);
}

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
