import { MESSAGE_STATE } from '../../src/lib/constants';
import { splitBranch } from '../../src/services/journeys';
import { useHarness } from '../support/harness';
import { sendingFixtures } from '../support/fixtures';
import { ServiceProcess, until, untilCount, useServiceProcesses } from '../support/processes';
import { useSmtpSink } from '../support/smtp';

const CONTACTS = 1000;
const KILLS = 3;
const SMTP_MAX_CONNECTIONS = 5;
/** The most a worker has handed to the server and not yet recorded: what a crash may send twice. */
const IN_FLIGHT = SMTP_MAX_CONNECTIONS * 2;

describe('a worker killed while contacts move through a journey', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  const sink = useSmtpSink();
  const processes = useServiceProcesses(h, 'journey-crash');

  const startWorker = (): ServiceProcess => processes.start(['--role=worker'], { SMTP_URL: sink.url, SMTP_MAX_CONNECTIONS: String(SMTP_MAX_CONNECTIONS), SEND_LEASE_SECONDS: '3' });

  test(`when the worker is killed with SIGKILL up to ${KILLS} times while ${CONTACTS} contacts pass a split, a condition and emails then each contact's ledger holds exactly the mails of its path, and each gets them`, async () => {
    const alice = await h.account();
    const { sender, group, type } = await f.basics(alice, 'Journey crash');
    await f.contacts(alice.user_id, type, CONTACTS, 'crash-journey.test');
    const automation = await f.automation(alice.user_id, { type: 'custom', contactType: type, groupId: group });
    const subjects = ['Branch A, yes', 'Branch A, no', 'After no', 'Branch B'];
    const utrs: string[] = [];
    for (const subject of subjects) {
      const id = await f.schedule(alice.user_id, automation, { senderId: sender, subject, waitingPeriod: 1, waitingType: 'instantly' });
      utrs.push(await f.utrOf('automation_schedules', id));
    }
    const utr = String((await f.automationRecord(automation)).utr);
    await h.api(alice).post('/automations/journey/save').send({
      utr,
      graph: JSON.stringify({
        start: 'split',
        nodes: {
          split: { type: 'split', branches: [{ percent: 50, next: 'check' }, { percent: 50, next: 'mail-b' }] },
          check: { type: 'condition', rule: { field: 'first_name', operator: 'ends with', value: '0' }, yes: 'mail-yes', no: 'mail-no' },
          'mail-yes': { type: 'email', schedule_utr: utrs[0], next: 'end' },
          'mail-no': { type: 'email', schedule_utr: utrs[1], next: 'mark' },
          mark: { type: 'set_field', field: 'city', value: 'No', next: 'after' },
          after: { type: 'email', schedule_utr: utrs[2] },
          'mail-b': { type: 'email', schedule_utr: utrs[3], next: 'end' },
          end: { type: 'exit' },
        },
      }),
    }).expect(200);
    await f.setAutomationStatus(automation, 1);

    const db = h.runtime.db;
    const moving = async () => Number((await db('automation_enrolments').where({ automation_id: automation }).whereNotNull('node_id').count({ n: '*' }))[0].n);
    const visits = async () => Number((await db('journey_visits as v').join('automation_enrolments as e', 'e.id', 'v.enrolment_id').where('e.automation_id', automation).count({ n: '*' }))[0].n);
    const enrolled = async () => Number((await db('automation_enrolments').where({ automation_id: automation }).count({ n: '*' }))[0].n);

    // Each kill lands after some contacts moved in this worker's life and before all have.
    let worker = startWorker();
    let killsMidMove = 0;
    const receivedAtKill: number[] = [];
    for (let kill = 1; kill <= KILLS; kill += 1) {
      const before = await visits();
      await until(async () => (await enrolled()) === CONTACTS && ((await visits()) > before || (await moving()) === 0), 120_000, `kill ${kill}: contacts moving`);
      if ((await moving()) === 0) break;
      worker.child.kill('SIGKILL');
      expect(await worker.exited).toBe('SIGKILL');
      await sink.settled();
      receivedAtKill.push(sink.messages.length);
      if ((await moving()) > 0 && (await visits()) > before) killsMidMove += 1;
      worker = startWorker();
    }
    expect(killsMidMove).toBeGreaterThanOrEqual(1);

    const expected = new Map<string, string[]>();
    for (let i = 0; i < CONTACTS; i += 1) {
      const email = `r${i}@crash-journey.test`;
      const branch = splitBranch(automation, 'split', email, [50, 50]);
      expected.set(email, branch === 1 ? ['Branch B'] : String(i).endsWith('0') ? ['Branch A, yes'] : ['After no', 'Branch A, no']);
    }
    const mails = Object.values(Object.fromEntries(expected)).flat().length;
    // The machine's pace decides how long this takes: only a count that stops moving is a fault.
    await untilCount(async () => CONTACTS - (await moving()), CONTACTS, 60_000, 'contacts at the end of their path');
    const settled = async () => Number((await db('send_messages').where({ automation_id: automation }).whereNotIn('state', [MESSAGE_STATE.queued, MESSAGE_STATE.sending]).count({ n: '*' }))[0].n);
    await untilCount(settled, mails, 60_000, 'mails sent');
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);

    // The ledger: exactly the mails of each contact's path, once each.
    const rows = await db('send_messages as m').join('automation_schedules as s', 's.id', 'm.automation_schedule_id').where('m.automation_id', automation).select('m.email_key', 's.subject');
    const ledger = new Map<string, string[]>();
    for (const r of rows) ledger.set(r.email_key, [...(ledger.get(r.email_key) ?? []), String(r.subject)].sort());
    expect(ledger).toEqual(expected);
    // Every node ran once per contact: one visit per node of its path.
    const repeated = await db('journey_visits as v').join('automation_enrolments as e', 'e.id', 'v.enrolment_id').where('e.automation_id', automation)
      .groupBy('v.enrolment_id', 'v.node_id').havingRaw('count(*) > 1').select('v.enrolment_id');
    expect(repeated).toEqual([]);
    expect(Number((await db('contacts').where({ user_id: alice.user_id, city: 'No' }).count({ n: '*' }))[0].n)).toBe([...expected.values()].filter((m) => m.includes('After no')).length);

    // The mailbox: each contact got each mail of its path; a kill while handing mail to the
    // server may send those in flight again (the ledger's in-doubt rule), never more.
    const got = new Map<string, Map<string, number>>();
    for (const m of sink.messages) {
      const mine = got.get(m.to[0]) ?? new Map<string, number>();
      mine.set(String(m.parsed.subject), (mine.get(String(m.parsed.subject)) ?? 0) + 1);
      got.set(m.to[0], mine);
    }
    expect(new Map([...got].map(([to, counts]) => [to, [...counts.keys()].sort()]))).toEqual(expected);
    const twice = [...got.values()].flatMap((counts) => [...counts.values()]).filter((n) => n > 1);
    expect(twice.every((n) => n === 2)).toBe(true);
    expect(twice.length).toBeLessThanOrEqual(IN_FLIGHT * receivedAtKill.length);
  }, 360_000);
});
