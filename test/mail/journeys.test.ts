import request from 'supertest';
import { useHarness } from '../support/harness';
import { addContactType, addSegment, manualClock, sendingFixtures, testWorker, useSendingSetup } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';
import type { TestAccount } from '../support/harness';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** A mail client's agent: its opens count as a person's. */
const READER = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Thunderbird/128.0';

describe('journeys', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  const setup = useSendingSetup(h);
  const alice = setup.account;
  const sink = useSmtpSink({ emptyBeforeEach: true });

  const received = () => sink.messages.map((m) => `${m.to[0]}: ${m.parsed.subject}`).sort();
  const save = async (account: TestAccount, automation: number, graph: unknown) => {
    const res = await h.api(account).post('/automations/journey/save').send({ utr: await f.utrOf('automations', automation), graph: JSON.stringify(graph) }).expect(200);
    return res.body.message.version as number;
  };
  const report = async (automation: number, version: number) => {
    const res = await h.api(alice).get(`/automations/journey/report?utr=${await f.utrOf('automations', automation)}&version=${version}`).expect(200);
    return Object.fromEntries(res.body.message.nodes.map((n: { id: string }) => [n.id, n]));
  };
  /** A step of the automation, its content links to the offer page. */
  const step = async (automation: number, subject: string) =>
    f.utrOf('automation_schedules', await f.schedule(alice.user_id, automation, {
      senderId: setup.sender,
      subject,
      waitingPeriod: 1,
      waitingType: 'instantly',
      html: '<html><body><p>Hi ((first_name))</p><p><a href="https://shop.example.org/offer">The offer</a></p></body></html>',
    }));
  /** The tracked path of the first link (or the pixel) in the message sent to `to` with `subject`. */
  const trackedPath = (to: string, subject: string, pixel = false) => {
    const message = sink.messages.find((m) => m.to[0] === to && m.parsed.subject === subject)!;
    const html = String(message.parsed.html);
    const url = pixel ? /<img src="([^"]+\.gif)"/.exec(html)![1] : /href="(http[^"]+\/c\/[^"]+)"/.exec(html)![1];
    return new URL(url).pathname;
  };

  test('when contacts go through an email, a wait for a click, a condition on a field, a field update and a split then each takes its own path', async () => {
    const clock = manualClock(new Date(Date.now() + 10 * DAY));
    const type = await addContactType(h, alice, 'Journey one');
    await f.contact(alice.user_id, type, 'ann@example.org', { first_name: 'Ann' });
    await f.contact(alice.user_id, type, 'ben@example.org', { first_name: 'Ben' });
    await f.contact(alice.user_id, type, 'cy@example.org', { first_name: 'Cy' });
    const automation = await f.automation(alice.user_id, { type: 'custom', contactType: type, groupId: setup.group });
    const hello = await step(automation, 'Hello ((first_name))');
    const clicked = await step(automation, 'Thanks for the click, ((first_name))');
    const ann = await step(automation, 'Just for Ann');
    const later = await step(automation, 'A day later, ((first_name))');
    const version = await save(alice, automation, {
      start: 'hello',
      nodes: {
        hello: { type: 'email', schedule_utr: hello, next: 'wait' },
        wait: { type: 'wait_until', event: 'clicked', node: 'hello', timeout_minutes: 120, yes: 'thanks', no: 'is-ann' },
        thanks: { type: 'email', schedule_utr: clicked, next: 'mark' },
        mark: { type: 'set_field', field: 'city', value: 'Clicker', next: 'end' },
        'is-ann': { type: 'condition', rule: { field: 'first_name', operator: 'is', value: 'Ann' }, yes: 'for-ann', no: 'pause' },
        'for-ann': { type: 'email', schedule_utr: ann },
        pause: { type: 'delay', days: 1, next: 'later' },
        later: { type: 'email', schedule_utr: later, next: 'end' },
        end: { type: 'exit' },
      },
    });
    expect(version).toBe(1);
    const { worker, close } = testWorker(h, sink.url, { now: clock.now });
    try {
      await f.setAutomationStatus(automation, 1);
      await worker.runOnce();
      expect(received()).toEqual(['ann@example.org: Hello Ann', 'ben@example.org: Hello Ben', 'cy@example.org: Hello Cy']);
      expect(await report(automation, 1)).toMatchObject({ hello: { entered: 3, completed: 3, failed: 0 }, wait: { entered: 3, waiting: 3 } });

      // Ben clicks: the click itself makes his wait due, and the next pass moves him on by "yes".
      const click = await request(h.runtime.app).get(trackedPath('ben@example.org', 'Hello Ben')).set('User-Agent', READER).expect(302);
      expect(click.headers.location).toBe('https://shop.example.org/offer');
      const ben = await h.runtime.db('automation_enrolments').where({ automation_id: automation, email_key: 'ben@example.org' }).first();
      expect(new Date(ben.next_due_at).getTime()).toBeLessThan(clock.now().getTime());
      await worker.runOnce();
      expect(received()).toContain('ben@example.org: Thanks for the click, Ben');
      expect((await h.runtime.db('contacts').where({ email_key: 'ben@example.org' }).first('city')).city).toBe('Clicker');

      // Nothing moves before the timeout; at the timeout the others go on by "no": Ann by the condition's "yes".
      clock.advance(HOUR);
      await worker.runOnce();
      expect(received()).toHaveLength(4);
      clock.advance(HOUR);
      await worker.runOnce();
      expect(received()).toEqual([
        'ann@example.org: Hello Ann',
        'ann@example.org: Just for Ann',
        'ben@example.org: Hello Ben',
        'ben@example.org: Thanks for the click, Ben',
        'cy@example.org: Hello Cy',
      ]);
      clock.advance(DAY);
      await worker.runOnce();
      expect(received()).toContain('cy@example.org: A day later, Cy');
      expect(received()).toHaveLength(6);
    } finally {
      await close();
    }
    expect(await report(automation, 1)).toMatchObject({
      hello: { entered: 3, completed: 3 },
      wait: { entered: 3, waiting: 0, yes: 1, no: 2 },
      'is-ann': { yes: 1, no: 1 },
      pause: { entered: 1, completed: 1 },
      end: { entered: 2, completed: 2 },
    });
    expect(await f.automationRecord(automation)).toMatchObject({ total_triggered: 6, total_delivered: 6 });
  });

  test('when a wait for an open and a condition on an open meet a person\'s open and an automated one then only the person\'s counts', async () => {
    const clock = manualClock(new Date(Date.now() + 20 * DAY));
    const type = await addContactType(h, alice, 'Journey opens');
    await f.contact(alice.user_id, type, 'dora@example.org', { first_name: 'Dora' });
    await f.contact(alice.user_id, type, 'emil@example.org', { first_name: 'Emil' });
    const automation = await f.automation(alice.user_id, { type: 'custom', contactType: type, groupId: setup.group });
    const hello = await step(automation, 'Hello ((first_name))');
    const opened = await step(automation, 'You opened it, ((first_name))');
    const notYet = await step(automation, 'Not opened yet, ((first_name))');
    await save(alice, automation, {
      start: 'hello',
      nodes: {
        hello: { type: 'email', schedule_utr: hello, next: 'wait' },
        wait: { type: 'wait_until', event: 'opened', node: 'hello', timeout_minutes: 60, yes: 'check', no: 'check' },
        check: { type: 'condition', rule: { event: 'opened', node: 'hello' }, yes: 'opened', no: 'not-yet' },
        opened: { type: 'email', schedule_utr: opened },
        'not-yet': { type: 'email', schedule_utr: notYet },
      },
    });
    const { worker, close } = testWorker(h, sink.url, { now: clock.now });
    try {
      await f.setAutomationStatus(automation, 1);
      await worker.runOnce();
      expect(received()).toHaveLength(2);
      await request(h.runtime.app).get(trackedPath('dora@example.org', 'Hello Dora', true)).set('User-Agent', READER).expect(200);
      // A security scanner's fetch is no open.
      await request(h.runtime.app).get(trackedPath('emil@example.org', 'Hello Emil', true)).set('User-Agent', 'Barracuda scanner').expect(200);
      await worker.runOnce();
      expect(received()).toContain('dora@example.org: You opened it, Dora');
      expect(received()).toHaveLength(3);
      clock.advance(HOUR);
      await worker.runOnce();
      expect(received()).toContain('emil@example.org: Not opened yet, Emil');
    } finally {
      await close();
    }
  });

  test('when 1,000 contacts meet a 30/70 split then the branches hold within 10 points, and a contact passing it again keeps its branch', async () => {
    const clock = manualClock(new Date(Date.now() + 30 * DAY));
    const type = await addContactType(h, alice, 'Journey split');
    await f.contacts(alice.user_id, type, 1000, 'split.test');
    const automation = await f.automation(alice.user_id, { type: 'custom', contactType: type, groupId: setup.group });
    // Every contact passes the split twice: a loop through a delay.
    await save(alice, automation, {
      start: 'split',
      nodes: {
        split: { type: 'split', branches: [{ percent: 30, next: 'a' }, { percent: 70, next: 'b' }] },
        a: { type: 'delay', hours: 1, next: 'again' },
        b: { type: 'delay', hours: 1, next: 'again' },
        again: { type: 'condition', rule: { field: 'city', operator: 'is', value: 'Twice' }, yes: 'end', no: 'mark' },
        mark: { type: 'set_field', field: 'city', value: 'Twice', next: 'split' },
        end: { type: 'exit' },
      },
    });
    const { worker, close } = testWorker(h, sink.url, { now: clock.now });
    try {
      await f.setAutomationStatus(automation, 1);
      await worker.runOnce();
      const first = await report(automation, 1);
      expect(first.split.entered).toBe(2000 - 1000);
      const [a, b] = first.split.branches;
      expect(a + b).toBe(1000);
      expect(Math.abs(a / 10 - 30)).toBeLessThanOrEqual(10);
      expect(Math.abs(b / 10 - 70)).toBeLessThanOrEqual(10);
      clock.advance(HOUR);
      await worker.runOnce();
      clock.advance(HOUR);
      await worker.runOnce();
    } finally {
      await close();
    }
    const after = await report(automation, 1);
    expect(after.split.entered).toBe(2000);
    expect(after.end.entered).toBe(1000);
    // Each contact's two passes took the same branch.
    const passes = await h.runtime.db('journey_visits as v')
      .join('automation_enrolments as e', 'e.id', 'v.enrolment_id')
      .where({ 'e.automation_id': automation, 'v.node_id': 'split' })
      .select('e.email_key', 'v.outcome');
    const branchOf = new Map<string, Set<string>>();
    for (const p of passes) branchOf.set(p.email_key, (branchOf.get(p.email_key) ?? new Set()).add(p.outcome));
    expect(branchOf.size).toBe(1000);
    expect([...branchOf.values()].every((set) => set.size === 1)).toBe(true);
  }, 120_000);

  test('when a live journey is edited while contacts wait then they finish on version 1 and new contacts take version 2; pausing stops both; leavers leave', async () => {
    const clock = manualClock(new Date(Date.now() + 40 * DAY));
    const type = await addContactType(h, alice, 'Journey versions');
    await f.contact(alice.user_id, type, 'old@example.org', { first_name: 'Old' });
    await f.contact(alice.user_id, type, 'gone@example.org', { first_name: 'Gone' });
    const automation = await f.automation(alice.user_id, { type: 'custom', contactType: type, groupId: setup.group });
    const one = await step(automation, 'Version one for ((first_name))');
    const two = await step(automation, 'Version two for ((first_name))');
    const graph = (utr: string) => ({ start: 'wait', nodes: { wait: { type: 'delay', hours: 2, next: 'mail' }, mail: { type: 'email', schedule_utr: utr } } });
    expect(await save(alice, automation, graph(one))).toBe(1);
    const { worker, close } = testWorker(h, sink.url, { now: clock.now });
    try {
      await f.setAutomationStatus(automation, 1);
      await worker.runOnce();
      expect(await save(alice, automation, graph(two))).toBe(2);
      await f.contact(alice.user_id, type, 'new@example.org', { first_name: 'New' });
      await f.groupUnsubscribe(alice.user_id, setup.group, 'gone@example.org');
      await worker.runOnce();
      const shown = await h.api(alice).get(`/automations/journey?utr=${await f.utrOf('automations', automation)}`).expect(200);
      expect(shown.body.message.versions.map((v: { version: number; contacts_in: number }) => [v.version, v.contacts_in])).toEqual([[2, 1], [1, 1]]);

      await f.setAutomationStatus(automation, 2);
      clock.advance(3 * HOUR);
      await worker.runOnce();
      expect(received()).toEqual([]);
      await f.setAutomationStatus(automation, 1);
      await worker.runOnce();
      expect(received()).toEqual(['new@example.org: Version two for New', 'old@example.org: Version one for Old']);
    } finally {
      await close();
    }
    // Version 1 is kept for its report once nobody is in it.
    expect(await report(automation, 1)).toMatchObject({ wait: { entered: 2, completed: 1, waiting: 0 }, mail: { entered: 1, completed: 1 } });
    expect((await h.runtime.db('automation_enrolments').where({ automation_id: automation, email_key: 'gone@example.org' }).first('state')).state).toBe(1);
  });

  test('when a delay waits until 09:00 on weekdays on each contact\'s own clock and a wait for a segment meets a member and a non-member then each goes on at its moment', async () => {
    // Friday 2026-12-04 20:00 UTC: 21:00 in Berlin, 15:00 in New York; the next weekday 09:00 is Monday's.
    const clock = manualClock(new Date('2026-12-04T20:00:00.000Z'));
    const type = await addContactType(h, alice, 'Journey clocks');
    await f.contact(alice.user_id, type, 'berlin@example.org', { first_name: 'Bea', time_zone: 'Europe/Berlin' });
    await f.contact(alice.user_id, type, 'newyork@example.org', { first_name: 'Ned', time_zone: 'America/New_York' });
    const members = await addSegment(h, alice, type, 'VIP', [{ email: 'berlin@example.org' }]);
    const automation = await f.automation(alice.user_id, { type: 'custom', contactType: type, groupId: setup.group });
    const morning = await step(automation, 'Good morning, ((first_name))');
    const vip = await step(automation, 'For our VIPs, ((first_name))');
    await save(alice, automation, {
      start: 'morning',
      nodes: {
        morning: { type: 'delay', until: '09:00', weekdays: [1, 2, 3, 4, 5], next: 'mail' },
        mail: { type: 'email', schedule_utr: morning, next: 'vip' },
        vip: { type: 'wait_until', event: 'in_segment', segment_id: members, timeout_minutes: 60, yes: 'vip-mail' },
        'vip-mail': { type: 'email', schedule_utr: vip },
      },
    });
    const { worker, close } = testWorker(h, sink.url, { now: clock.now });
    const dueOf = async (email: string) => new Date((await h.runtime.db('automation_enrolments').where({ automation_id: automation, email_key: email }).first('next_due_at')).next_due_at).toISOString();
    try {
      await f.setAutomationStatus(automation, 1);
      await worker.runOnce();
      expect(await dueOf('berlin@example.org')).toBe('2026-12-07T08:00:00.000Z');
      expect(await dueOf('newyork@example.org')).toBe('2026-12-07T14:00:00.000Z');
      clock.advance(2 * DAY + 12 * HOUR + MINUTE); // Monday 08:01 UTC: 09:01 in Berlin
      await worker.runOnce();
      expect(received()).toEqual(['berlin@example.org: For our VIPs, Bea', 'berlin@example.org: Good morning, Bea']);
      clock.advance(6 * HOUR); // 14:01 UTC: 09:01 in New York
      await worker.runOnce();
      expect(received()).toContain('newyork@example.org: Good morning, Ned');
      clock.advance(HOUR);
      await worker.runOnce();
    } finally {
      await close();
    }
    expect(received()).toHaveLength(3);
    expect(await report(automation, 1)).toMatchObject({ vip: { entered: 2, yes: 1, no: 1 } });
  });
});
