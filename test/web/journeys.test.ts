import { addAutomation, Audience, audienceOf, berlin, scheduleBody } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { asFragment, signIn, useTwoAccounts } from '../support/web';

/** The draft graph the editor carries in its form. */
const draftOf = (html: string) => JSON.parse(/name="draft" value="([^"]*)"/.exec(html)![1].replace(/&quot;/g, '"').replace(/&amp;/g, '&').replace(/&#39;/g, "'"));

describe('dashboard journeys', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);
  let a: Audience;
  let utr: string;

  beforeAll(async () => {
    a = await audienceOf(h, t.alice, await berlin(h));
    utr = await addAutomation(h, t.alice, { automation_name: 'Trial onboarding', unsubscribe_group_id: a.groupId });
    for (const subject of ['Welcome', 'Reminder']) await h.api(t.alice).post('/automations/schedule/create').send(scheduleBody(utr, a.senderId, { subject })).expect(200);
  });

  test('when the journey page opens then the steps show as a chain, and each change answers the editor with the new draft and undo', async () => {
    const page = await t.web.get(`/automations/${utr}/journey`).expect(200);
    expect(page.text).toContain('Send an email');
    const draft = draftOf(page.text);
    expect(draft).toEqual({ start: 'email-1', nodes: { 'email-1': expect.objectContaining({ type: 'email', next: 'email-2' }), 'email-2': expect.objectContaining({ type: 'email' }) } });

    const inserted = await asFragment(t.web.post(`/automations/${utr}/journey/insert`, { draft: JSON.stringify(draft), previous: '', edge: 'email-1|next', type: 'condition' }), 'journey-editor').expect(200);
    expect(inserted.text).toMatch(/^\s*<form id="journey-editor"/);
    const withCheck = draftOf(inserted.text);
    expect(withCheck.nodes['email-1'].next).toBe('condition-1');
    expect(withCheck.nodes['condition-1']).toEqual({ type: 'condition', rule: { field: 'first_name', operator: 'is not empty' }, yes: 'email-2' });
    expect(inserted.text).toContain('Undo last change');
    expect(inserted.text).toContain('>Yes<');

    const applied = await t.web.post(`/automations/${utr}/journey/apply`, { draft: JSON.stringify(withCheck), previous: JSON.stringify(draft), node: 'condition-1', n_check: 'opened', n_email: 'email-1' }).expect(200);
    expect(draftOf(applied.text).nodes['condition-1']).toEqual({ type: 'condition', rule: { event: 'opened', node: 'email-1' }, yes: 'email-2' });

    const undone = await t.web.post(`/automations/${utr}/journey/undo`, { draft: JSON.stringify(withCheck), previous: JSON.stringify(draft) }).expect(200);
    expect(draftOf(undone.text)).toEqual(draft);

    const saved = await t.web.post(`/automations/${utr}/journey/save`, { draft: JSON.stringify(withCheck) }).expect(303);
    expect(saved.headers.location).toBe(`/automations/${utr}/journey`);
    expect((await h.api(t.alice).get(`/automations/journey?utr=${utr}`).expect(200)).body.message.version).toBe(1);
  });

  test('when a draft has a fault then the save answers 422 with the message at its step', async () => {
    const draft = { start: 'a', nodes: { a: { type: 'split', branches: [{ percent: 30 }, { percent: 30 }] } } };
    const res = await t.web.post(`/automations/${utr}/journey/save`, { draft: JSON.stringify(draft) }).expect(422);
    expect(res.text).toMatch(/class="flow-box type-split invalid[^"]*" id="node-a">[\s\S]*?the branches&#39; percents add up to 60, not 100\./);
  });

  test('when another account asks for the journey page then it is not found', async () => {
    const bob = await signIn(h, t.bob);
    await bob.get(`/automations/${utr}/journey`).expect(404);
    await bob.post(`/automations/${utr}/journey/save`, { draft: '{"start":"x","nodes":{"x":{"type":"exit"}}}' }).expect(404);
  });
});
