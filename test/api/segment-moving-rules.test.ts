import { insertId } from '../../src/db/dialect';
import { MESSAGE_KIND, MESSAGE_STATE } from '../../src/lib/constants';
import { addContactType, addCustomField, sendingFixtures } from '../support/fixtures';
import { TestAccount, useHarness } from '../support/harness';
import { failed } from '../support/expectations';

type Rule = [field: string, operator: string, ...values: string[]];
const DAY = 86_400_000;

/**
 * Segment rules whose members move without a contact write: relative dates (evaluated when the
 * segment is counted, listed or sent) and engagement with sends (kept current as opens and
 * clicks are recorded).
 */
describe('segments with relative dates and engagement', () => {
  const h = useHarness();
  const fx = sendingFixtures(h);
  const [alice, bob] = h.accounts(2);
  let type: number;
  const now = new Date('2026-11-20T12:00:00.000Z');
  let clock = now.getTime();
  const ids: Record<string, number> = {};
  const messages: Record<string, number> = {};
  let sendUtr: string;
  let otherSendUtr: string;
  let bobSendUtr: string;

  beforeAll(async () => {
    h.runtime.services.segments.setClock(() => new Date(clock));
    type = await addContactType(h, alice, 'Members');
    await addCustomField(h, alice, 'renews', 'datetime-local');
    const daysAgo = (n: number) => new Date(now.getTime() - n * DAY).toISOString();
    const people: [string, number, Record<string, unknown>][] = [
      ['new', 5, { renews: '2026-11-18T09:00' }],
      ['month', 25, { renews: '2026-12-20T09:00' }],
      ['old', 40, { renews: '2026-09-01T09:00' }],
    ];
    for (const [key, age, custom] of people) {
      ids[key] = await fx.contact(alice.user_id, type, `${key}@example.com`, { custom_fields: custom, created_at: daysAgo(age), updated_at: daysAgo(age) });
    }
    const sender = await fx.sender(alice.user_id);
    const group = await fx.group(alice.user_id);
    const send = await fx.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }], status: 3 });
    const other = await fx.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }], status: 3 });
    sendUtr = String((await fx.send(send)).utr);
    otherSendUtr = String((await fx.send(other)).utr);
    const bobSend = await fx.singleSend(bob.user_id, { senderId: await fx.sender(bob.user_id), groupId: await fx.group(bob.user_id), to: [], status: 3 });
    bobSendUtr = String((await fx.send(bobSend)).utr);
    // `new` and `month` were sent the first send, `old` only the other one.
    for (const [key, sendId] of [['new', send], ['month', send], ['old', other]] as const) {
      const at = daysAgo(2);
      messages[key] = await insertId(h.runtime.db, 'send_messages', {
        user_id: alice.user_id,
        kind: MESSAGE_KIND.single,
        single_send_id: sendId,
        contact_id: ids[key],
        email: `${key}@example.com`,
        email_key: `${key}@example.com`,
        state: MESSAGE_STATE.sent,
        sent_at: at,
        created_at: at,
        updated_at: at,
      });
    }
  });

  afterAll(() => h.runtime.services.segments.setClock(() => new Date()));

  let seq = 0;
  async function save(account: TestAccount, rules: Rule[], contactTypeId = type) {
    seq += 1;
    return h.api(account)
      .post('/segment/save')
      .send({
        segment_name: `Moving ${seq}`,
        contact_type_id: contactTypeId,
        select_field: rules.map((r) => r[0]),
        select_operator: rules.map((r) => r[1]),
        value: rules.flatMap((r) => r.slice(2)),
      });
  }

  async function saved(rules: Rule[]): Promise<number> {
    const res = await save(alice, rules);
    expect(res.body).toEqual({ status: 'success', message: 'Saved Successfully' });
    const row = await h.runtime.db('segments').where({ user_id: alice.user_id, segment_name: `Moving ${seq}` }).first('id');
    return Number(row.id);
  }

  async function members(segmentId: number): Promise<string[]> {
    const res = await h.api(alice).get(`/segment/email/list?segment_id=${segmentId}`).expect(200);
    return res.body.message.contactEmails.map((r: { email: string }) => r.email.split('@')[0]).sort();
  }

  it.each<[string, Rule[], string[]]>([
    ['created in the last 30 days', [['created_at', 'in the last', '30']], ['month', 'new']],
    ['created more than 30 days ago', [['created_at', 'more than ago', '30']], ['old']],
    ['a date field in the last 7 days (a future date is not)', [['renews', 'in the last', '7']], ['new']],
    ['a date field more than 30 days ago', [['renews', 'more than ago', '30']], ['old']],
    ['sent a chosen send', [['engagement', 'was sent', 'SEND']], ['month', 'new']],
    ['sent any send', [['engagement', 'was sent', 'any']], ['month', 'new', 'old']],
  ])('when a segment says %s then its members are those contacts', async (_name, rules, expected) => {
    const id = await saved(rules.map(([f, op, v]) => [f, op, v === 'SEND' ? sendUtr : v]));
    expect(await members(id)).toEqual(expected);
  });

  it('when the clock moves on then a relative segment rolls forward at its next count and listing', async () => {
    const id = await saved([['created_at', 'in the last', '30']]);
    expect(await members(id)).toEqual(['month', 'new']);
    const body = { segment_name: 'x', query_type: 'and', contact_type_id: type, select_field: ['created_at'], select_operator: ['in the last'], value: ['30'] };
    expect(await h.runtime.services.segments.count({ userId: alice.user_id }, body)).toBe(2);
    clock = now.getTime() + 10 * DAY;
    try {
      expect(await h.runtime.services.segments.count({ userId: alice.user_id }, body)).toBe(1);
      expect(await members(id)).toEqual(['new']);
    } finally {
      clock = now.getTime();
    }
    expect(await members(id)).toEqual(['month', 'new']);
  });

  it('when the maintenance run comes round then moving segments roll forward without being read, and the others are left alone', async () => {
    const moving = await saved([['created_at', 'in the last', '30']]);
    const still = await saved([['email', 'contains', 'example']]);
    const stored = async (segmentId: number) =>
      (await h.runtime.db('segment_recipients').where({ segment_id: segmentId }).pluck('email')).map((e: string) => e.split('@')[0]).sort();
    expect(await stored(moving)).toEqual(['month', 'new']);
    // A stored member of the other segment deleted by hand stays deleted: that segment is not refreshed.
    await h.runtime.db('segment_recipients').where({ segment_id: still, email: 'old@example.com' }).delete();
    clock = now.getTime() + 10 * DAY;
    try {
      expect(await h.runtime.services.segments.refreshAllMoving()).toBeGreaterThanOrEqual(1);
      expect(await stored(moving)).toEqual(['new']);
      expect(await stored(still)).toEqual(['month', 'new']);
    } finally {
      clock = now.getTime();
    }
  });

  it('when a recipient opens and clicks then the engagement segments follow at once', async () => {
    const opened = await saved([['engagement', 'opened', sendUtr]]);
    const notOpened = await saved([['engagement', 'not opened', sendUtr]]);
    const clickedAny = await saved([['engagement', 'clicked', 'any']]);
    const openedRecent = await saved([['created_at', 'in the last', '30'], ['engagement', 'opened', 'any']]);
    const stored = async (segmentId: number) =>
      (await h.runtime.db('segment_recipients').where({ segment_id: segmentId }).pluck('email')).map((e: string) => e.split('@')[0]).sort();
    expect(await stored(opened)).toEqual([]);
    expect(await stored(notOpened)).toEqual(['month', 'new']);

    expect(await h.runtime.services.tracking.recordOpen(fx.token(messages.new))).toBe(true);
    // Read from the stored memberships: the open itself moved them.
    expect(await stored(opened)).toEqual(['new']);
    expect(await stored(notOpened)).toEqual(['month']);
    expect(await stored(openedRecent)).toEqual(['new']);
    expect(await stored(clickedAny)).toEqual([]);

    const [sendId] = await h.runtime.db('send_messages').where({ id: messages.old }).pluck('single_send_id');
    await h.runtime.db('send_links').insert({ user_id: alice.user_id, single_send_id: sendId, n: 1, url: 'https://example.com/a', total_clicks: 0, unique_clicks: 0, created_at: now.toISOString() });
    expect(await h.runtime.services.tracking.recordClick(fx.token(messages.old), 1)).toBe('https://example.com/a');
    expect(await stored(clickedAny)).toEqual(['old']);
    // A click counts as an open too, and `old` is older than 30 days.
    expect(await stored(openedRecent)).toEqual(['new']);
  });

  it('when the values do not fit the new operators then each is refused beside its condition', async () => {
    const res = await save(alice, [
      ['created_at', 'in the last', 'soon'],
      ['renews', 'more than ago', '0'],
      ['engagement', 'opened', bobSendUtr],
      ['engagement', 'clicked', ''],
      ['email', 'in the last', '3'],
      ['engagement', 'is', 'any'],
    ]);
    expect(res.status).toBe(422);
    expect(res.body).toEqual(failed({
      'value.0': ['The value.0 must be an integer.'],
      'value.1': ['The value.1 must be between 1 and 36500.'],
      'value.3': ['The value.3 field is required.'],
      'select_operator.4': ['The selected select operator.4 is invalid.'],
      'select_operator.5': ['The selected select operator.5 is invalid.'],
    }));
    // Another account's send is refused once the rest is right.
    const foreign = await save(alice, [['engagement', 'opened', bobSendUtr], ['engagement', 'was sent', otherSendUtr], ['engagement', 'clicked', 'not-a-send']]);
    expect(foreign.status).toBe(422);
    expect(foreign.body).toEqual({ status: 'failed', errors: { 'value.0': ['The selected value.0 is invalid.'], 'value.2': ['The selected value.2 is invalid.'] } });
  });
});
