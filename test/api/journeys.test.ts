import { addAutomation, Audience, audienceOf, berlin, scheduleBody } from '../support/fixtures';
import { NOT_FOUND } from '../support/expectations';
import { TIMESTAMP, useHarness } from '../support/harness';

describe('automation journeys', () => {
  const h = useHarness();
  const [alice, bob] = h.accounts(2);
  let a: Audience;
  let automation: string;
  let steps: string[];

  beforeAll(async () => {
    const place = await berlin(h);
    a = await audienceOf(h, alice, place);
    await audienceOf(h, bob, place);
    automation = await addAutomation(h, alice, { unsubscribe_group_id: a.groupId });
    await h.api(alice).post('/automations/schedule/create').send(scheduleBody(automation, a.senderId, { subject: 'Welcome' })).expect(200);
    await h.api(alice).post('/automations/schedule/create').send(scheduleBody(automation, a.senderId, { subject: 'Two days in', waiting_period: 2, waiting_type: 'days' })).expect(200);
    const res = await h.api(alice).get(`/automations/schedule?utr=${automation}`).expect(200);
    steps = res.body.message.automation_schedules.map((s: { utr: string }) => s.utr);
  });

  const save = (graph: unknown, utr = automation, account = alice) => h.api(account).post('/automations/journey/save').send({ utr, graph: typeof graph === 'string' ? graph : JSON.stringify(graph) });

  /** Asserts the save is refused with exactly these graph errors. */
  async function refused(graph: unknown, errors: string[]) {
    const res = await save(graph).expect(422);
    expect(res.body).toEqual({ status: 'failed', errors: { graph: errors } });
  }

  const branch = () => ({
    start: 'welcome',
    nodes: {
      welcome: { type: 'email', schedule_utr: steps[0], next: 'wait' },
      wait: { type: 'wait_until', event: 'opened', node: 'welcome', timeout_minutes: 1440, yes: 'thanks', no: 'split' },
      thanks: { type: 'set_field', field: 'city', value: 'Opened', next: 'done' },
      split: { type: 'split', branches: [{ percent: 30, next: 'again' }, { percent: 70, next: 'done' }] },
      again: { type: 'delay', days: 2, next: 'reminder' },
      reminder: { type: 'email', schedule_utr: steps[1], next: 'check' },
      check: { type: 'condition', rule: { field: 'first_name', operator: 'is', value: 'Ann' }, yes: 'done' },
      done: { type: 'exit' },
    },
  });

  test('when an automation has no journey then its steps answer as a chain of emails and delays, version 0', async () => {
    const res = await h.api(alice).get(`/automations/journey?utr=${automation}`).expect(200);
    expect(res.body).toEqual({
      status: 'success',
      message: {
        version: 0,
        graph: {
          start: 'email-1',
          nodes: {
            'email-1': { type: 'email', schedule_utr: steps[0], next: 'wait-2' },
            'wait-2': { type: 'delay', days: 2, next: 'email-2' },
            'email-2': { type: 'email', schedule_utr: steps[1] },
          },
        },
        versions: [],
      },
    });
  });

  test('when a graph has faults then each is refused with a 422 naming its node', async () => {
    const g = branch();
    await refused({ ...g, nodes: { ...g.nodes, wait: { ...g.nodes.wait, yes: 'n3' } } }, ['Node "wait": \'yes\' names no node.']);
    await refused({ ...g, nodes: { ...g.nodes, done: { type: 'finish' } } }, ['Node "done": \'type\' must be one of email, delay, wait_until, condition, split, set_field, webhook, exit.']);
    await refused({ ...g, nodes: { ...g.nodes, done: { type: 'exit', next: 'welcome' } } }, ['Node "done": \'next\' is no field of a exit node.']);
    await refused({ ...g, nodes: { ...g.nodes, orphan: { type: 'exit' } } }, ['Node "orphan": no path from the start reaches it.']);
    await refused({ ...g, nodes: { ...g.nodes, split: { type: 'split', branches: [{ percent: 30, next: 'again' }, { percent: 60, next: 'done' }] } } }, [
      'Node "split": the branches\' percents add up to 90, not 100.',
    ]);
    // A loop through a condition and a split alone would spin; through a delay it is allowed.
    await refused({
      ...g,
      nodes: {
        ...g.nodes,
        split: { type: 'split', branches: [{ percent: 30, next: 'again' }, { percent: 70, next: 'check' }] },
        check: { type: 'condition', rule: { field: 'first_name', operator: 'is', value: 'Ann' }, yes: 'done', no: 'split' },
      },
    }, [
      'Node "split": it is on a loop without a delay or a wait.',
    ]);
    await save({ ...g, nodes: { ...g.nodes, check: { type: 'condition', rule: { field: 'first_name', operator: 'is', value: 'Ann' }, yes: 'done', no: 'again' } } }).expect(200);

    const other = await addAutomation(h, alice, {});
    await h.api(alice).post('/automations/schedule/create').send(scheduleBody(other, a.senderId)).expect(200);
    const [foreign] = (await h.api(alice).get(`/automations/schedule?utr=${other}`)).body.message.automation_schedules;
    await refused({ ...g, nodes: { ...g.nodes, reminder: { type: 'email', schedule_utr: foreign.utr, next: 'check' } } }, ['Node "reminder": \'schedule_utr\' names no email of this automation.']);
    await refused({ ...g, nodes: { ...g.nodes, wait: { ...g.nodes.wait, node: 'split' } } }, ['Node "wait": \'node\' must name an email node.']);
    await refused({ ...g, nodes: { ...g.nodes, check: { type: 'condition', rule: { field: 'shoe_size', operator: 'is', value: '9' }, yes: 'done' } } }, ['Node "check": \'rule.field\' names no field.']);
    await refused({ ...g, nodes: { ...g.nodes, thanks: { type: 'set_field', field: 'email', value: 'x@example.org', next: 'done' } } }, ['Node "thanks": \'field\' names no field a journey can set.']);
    await refused({ ...g, nodes: { 'bad id!': { type: 'exit' } }, start: 'bad id!' }, ['Node "bad id!": a node id has 1 to 40 letters, digits, - or _.']);
    await refused({ ...g, start: 'nowhere' }, ['\'start\' names no node ("nowhere").']);

    const invalid = await save('{not json').expect(422);
    expect(invalid.body).toEqual({ status: 'failed', errors: { graph: ['The graph must be valid JSON.'] } });
    const missing = await h.api(alice).post('/automations/journey/save').send({ utr: automation }).expect(422);
    expect(missing.body.errors.graph).toEqual(['The graph field is required.']);
  });

  test('when a journey is saved then it answers with its version, and another account cannot see or save it', async () => {
    const utr = await addAutomation(h, alice, { unsubscribe_group_id: a.groupId });
    await h.api(alice).post('/automations/schedule/create').send(scheduleBody(utr, a.senderId)).expect(200);
    const [step] = (await h.api(alice).get(`/automations/schedule?utr=${utr}`)).body.message.automation_schedules;
    const graph = { start: 'hello', nodes: { hello: { type: 'email', schedule_utr: step.utr } } };
    const res = await save(graph, utr).expect(200);
    expect(res.body).toEqual({ status: 'success', message: { message: 'Journey Saved', version: 1 } });
    // Nobody has entered version 1 yet: saving again replaces it.
    await save({ ...graph, nodes: { hello: { ...graph.nodes.hello, next: 'bye' }, bye: { type: 'exit' } } }, utr).expect(200);
    const shown = await h.api(alice).get(`/automations/journey?utr=${utr}`).expect(200);
    expect(shown.body.message).toEqual({
      version: 1,
      graph: { start: 'hello', nodes: { hello: { type: 'email', schedule_utr: step.utr, next: 'bye' }, bye: { type: 'exit' } } },
      versions: [{ version: 1, created_at: expect.stringMatching(TIMESTAMP), created_by: expect.any(String), contacts_in: 0 }],
    });
    const report = await h.api(alice).get(`/automations/journey/report?utr=${utr}&version=1`).expect(200);
    expect(report.body.message.nodes).toEqual([
      { id: 'hello', type: 'email', entered: 0, waiting: 0, completed: 0, yes: 0, no: 0, branches: [], failed: 0 },
      { id: 'bye', type: 'exit', entered: 0, waiting: 0, completed: 0, yes: 0, no: 0, branches: [], failed: 0 },
    ]);
    const unknownVersion = await h.api(alice).get(`/automations/journey/report?utr=${utr}&version=7`).expect(422);
    expect(unknownVersion.body.errors).toEqual({ version: ['The automation has no such journey version.'] });

    expect((await h.api(bob).get(`/automations/journey?utr=${utr}`).expect(404)).body).toEqual(NOT_FOUND);
    expect((await save(graph, utr, bob).expect(404)).body).toEqual(NOT_FOUND);
  });

  test('when a journey is exported then the file imports into another account as a draft with its emails and its graph on the new steps', async () => {
    const utr = await addAutomation(h, alice, { automation_name: 'Moving house', unsubscribe_group_id: a.groupId });
    await h.api(alice).post('/automations/schedule/create').send(scheduleBody(utr, a.senderId, { subject: 'Welcome home' })).expect(200);
    await h.api(alice).post('/automations/schedule/create').send(scheduleBody(utr, a.senderId, { subject: 'Settled in?' })).expect(200);
    const [one, two] = (await h.api(alice).get(`/automations/schedule?utr=${utr}`)).body.message.automation_schedules;
    const graph = {
      start: 'hello',
      nodes: {
        hello: { type: 'email', schedule_utr: one.utr, next: 'wait' },
        wait: { type: 'wait_until', event: 'opened', node: 'hello', timeout_minutes: 60, yes: 'again' },
        again: { type: 'email', schedule_utr: two.utr },
      },
    };
    await save(graph, utr).expect(200);
    const exported = await h.api(alice).get(`/automations/journey/export?utr=${utr}`).expect(200);
    expect(exported.headers['content-disposition']).toBe('attachment; filename=Moving-house.journey.json');
    const file = exported.body;
    expect(file).toMatchObject({ format: 'journey', format_version: 1, journey: true, automation: { automation_name: 'Moving house' }, graph });
    expect(file.emails.map((e: { subject: string }) => e.subject)).toEqual(['Welcome home', 'Settled in?']);

    const imported = await h.api(bob).post('/automations/journey/import').attach('file', Buffer.from(JSON.stringify(file)), 'moving.journey.json').expect(200);
    const copy = imported.body.message.utr;
    const details = (await h.api(bob).get(`/automations/details?utr=${copy}`).expect(200)).body.message.automation;
    expect(details).toMatchObject({ automation_name: 'Moving house', status: 0, automation_for: null, unsubscribe_group_id: null });
    const steps = (await h.api(bob).get(`/automations/schedule?utr=${copy}`).expect(200)).body.message.automation_schedules;
    expect(steps.map((s: { subject: string }) => s.subject)).toEqual(['Welcome home', 'Settled in?']);
    const journey = (await h.api(bob).get(`/automations/journey?utr=${copy}`).expect(200)).body.message;
    expect(journey.version).toBe(1);
    expect(journey.graph.nodes.hello.schedule_utr).toBe(steps[0].utr);
    expect(journey.graph.nodes.again.schedule_utr).toBe(steps[1].utr);

    const broken = await h.api(bob).post('/automations/journey/import').attach('file', Buffer.from('{"format": "csv"}'), 'x.json').expect(422);
    expect(broken.body.errors).toEqual({ file: ['The file must be a journey exported as JSON.'] });
    const wrongType = await h.api(bob).post('/automations/journey/import').attach('file', Buffer.from('a,b'), 'x.csv').expect(422);
    expect(wrongType.body.errors).toEqual({ file: ['The file must be a file of type: json.'] });
  });
});
