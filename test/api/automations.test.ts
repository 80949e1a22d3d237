import { addAutomation, addGroup, Audience, audienceOf, berlin, PLAIN_TIME, scheduleBody, UUID } from '../support/fixtures';
import { expectBulkIdRules, NOT_FOUND } from '../support/expectations';
import { TIMESTAMP, useHarness } from '../support/harness';


describe('automations', () => {
  const h = useHarness();
  const [alice, bob] = h.accounts(2);
  let a: Audience;
  let b: Audience;

  beforeAll(async () => {
    const place = await berlin(h);
    a = await audienceOf(h, alice, place);
    b = await audienceOf(h, bob, place);
  });

  async function details(utr: string, account = alice) {
    return (await h.api(account).get(`/automations/details?utr=${utr}`).expect(200)).body.message.automation;
  }

  test('when a welcome automation is created then it is a draft aimed at its target and group', async () => {
    const res = await h.api(alice).post('/automations/create')
      .field('type', 'welcome')
      .field('automation_name', 'Welcome series')
      .field('automation_for', `contacts_${a.contactTypeId}`)
      .field('unsubscribe_group_id', String(a.groupId))
      .expect(200);
    expect(res.body).toEqual({ status: 'success', message: { utr: expect.stringMatching(UUID) } });
    expect(await details(res.body.message.utr)).toEqual({
      id: expect.any(Number),
      user_id: alice.user_id,
      automation_for: a.contactTypeId,
      automation_for_table: 'contacts_',
      automation_name: 'Welcome series',
      exit_criteria: 0,
      unsubscribe_group_id: String(a.groupId),
      automation_type: 1,
      utr: res.body.message.utr,
      status: 0,
      live_at: null,
      total_triggered: 0,
      total_delivered: 0,
      total_unique_opens: 0,
      total_opens: 0,
      total_bounces: 0,
      total_unsubscribe: 0,
      total_failed: 0,
      total_unique_clicks: 0,
      total_clicks: 0,
      total_template_errors: 0,
      deleted_at: null,
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: expect.stringMatching(TIMESTAMP),
    });
  });

  test('when a custom automation targets a segment then type 2 and segments_ are stored; group may be left out', async () => {
    const utr = await addAutomation(h, alice, { type: 'custom', automation_for: `segments_${a.segmentId}` });
    expect(await details(utr)).toMatchObject({ automation_type: 2, automation_for: a.segmentId, automation_for_table: 'segments_', unsubscribe_group_id: null });
    const bare = await addAutomation(h, alice, {});
    expect(await details(bare)).toMatchObject({ automation_for: null, automation_for_table: null, unsubscribe_group_id: null });
  });

  test('when type and name are missing or invalid then 422 reports them together', async () => {
    const missing = await h.api(alice).post('/automations/create').send({}).expect(422);
    expect(missing.body).toEqual({
      status: 'failed',
      errors: { type: ['The type field is required.'], automation_name: ['The automation name field is required.'] },
    });
    const bad = await h.api(alice).post('/automations/create')
      .send({ type: 'drip', automation_name: 'x'.repeat(256), automation_for: 'lists_3', unsubscribe_group_id: 'abc' })
      .expect(422);
    expect(bad.body.errors).toEqual({
      type: ['The selected type is invalid.'],
      automation_name: ['The automation name may not be greater than 255 characters.'],
      automation_for: ['The automation for format is invalid.'],
      unsubscribe_group_id: ['The unsubscribe group id must be an integer.'],
    });
  });

  test("when the target or group belongs to another account then 422 and nothing is created", async () => {
    const before = (await h.api(alice).get('/automations')).body.message.automations.length;
    const res = await h.api(alice).post('/automations/create')
      .send({ type: 'welcome', automation_name: 'Stolen', automation_for: `segments_${b.segmentId}`, unsubscribe_group_id: b.groupId })
      .expect(422);
    expect(res.body.errors).toEqual({
      automation_for: ['The selected automation for is invalid.'],
      unsubscribe_group_id: ['The selected unsubscribe group id is invalid.'],
    });
    const type = await h.api(alice).post('/automations/create').send({ type: 'welcome', automation_name: 'x', automation_for: `contacts_${b.contactTypeId}` }).expect(422);
    expect(type.body.errors).toEqual({ automation_for: ['The selected automation for is invalid.'] });
    expect((await h.api(alice).get('/automations')).body.message.automations).toHaveLength(before);
  });

  test('when listed then automations come newest first with automation_schedule_count; details have no count', async () => {
    const carol = await h.account();
    const c = await audienceOf(h, carol, await berlin(h));
    const first = await addAutomation(h, carol, { automation_name: 'First' });
    const second = await addAutomation(h, carol, { automation_name: 'Second' });
    for (const subject of ['One', 'Two']) {
      await h.api(carol).post('/automations/schedule/create').send(scheduleBody(first, c.senderId, { subject })).expect(200);
    }
    const res = await h.api(carol).get('/automations').expect(200);
    const list = res.body.message.automations;
    expect(list.map((x: { utr: string }) => x.utr)).toEqual([second, first]);
    expect(list.map((x: { automation_schedule_count: number }) => x.automation_schedule_count)).toEqual([0, 2]);
    const { automation_schedule_count: _count, ...withoutCount } = list[1];
    expect(await details(first, carol)).toEqual(withoutCount);
    expect((await h.api(bob).get('/automations')).body.message.automations.map((x: { utr: string }) => x.utr)).not.toContain(first);
  });

  test('when set live without a group then 409 with the reference sentence and the draft stays a draft', async () => {
    const utr = await addAutomation(h, alice, {});
    const res = await h.api(alice).get(`/automations/set-live?utr=${utr}`).expect(409);
    expect(res.body).toEqual({ status: 'failed', errors: 'Unsubscribe group require to live automation' });
    expect(await details(utr)).toMatchObject({ status: 0, live_at: null });
  });

  test('when set live with a group then it is live with live_at, and setting it live again changes nothing', async () => {
    const utr = await addAutomation(h, alice, { unsubscribe_group_id: a.groupId });
    const res = await h.api(alice).get(`/automations/set-live?utr=${utr}`).expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Automation has been set live' });
    const liveNow = await details(utr);
    expect(liveNow).toMatchObject({ status: 1, live_at: expect.stringMatching(PLAIN_TIME) });
    const again = await h.api(alice).get(`/automations/set-live?utr=${utr}`).expect(200);
    expect(again.body.message).toBe('Automation has been set live');
    expect(await details(utr)).toEqual(liveNow);
  });

  test('when paused then only a live automation pauses (status 2), and a paused one can go live again', async () => {
    const utr = await addAutomation(h, alice, { unsubscribe_group_id: a.groupId });
    const draft = await h.api(alice).get(`/automations/pause?utr=${utr}`).expect(409);
    expect(draft.body).toEqual({ status: 'failed', errors: 'Only a live automation can be paused; set it live first.' });
    expect((await details(utr)).status).toBe(0);

    await h.api(alice).get(`/automations/set-live?utr=${utr}`).expect(200);
    const paused = await h.api(alice).get(`/automations/pause?utr=${utr}`).expect(200);
    expect(paused.body).toEqual({ status: 'success', message: 'Automation Paused Successfully' });
    expect((await details(utr)).status).toBe(2);
    await h.api(alice).get(`/automations/pause?utr=${utr}`).expect(409);
    expect((await details(utr)).status).toBe(2);

    await h.api(alice).get(`/automations/set-live?utr=${utr}`).expect(200);
    expect((await details(utr)).status).toBe(1);
  });

  test('when updated then only the given fields change; a blank target or group clears it', async () => {
    const utr = await addAutomation(h, alice, { automation_for: `contacts_${a.contactTypeId}` });
    const res = await h.api(alice).post(`/automations/update?utr=${utr}`).send({ automation_name: 'Renamed', unsubscribe_group_id: a.groupId }).expect(200);
    expect(res.body).toEqual({ status: 'success', message: { utr } });
    expect(await details(utr)).toMatchObject({ automation_name: 'Renamed', unsubscribe_group_id: String(a.groupId), automation_for: a.contactTypeId, automation_type: 1 });
    await h.api(alice).get(`/automations/set-live?utr=${utr}`).expect(200);

    await h.api(alice).post('/automations/update').type('form').send({ utr, automation_for: `segments_${a.segmentId}` }).expect(200);
    expect(await details(utr)).toMatchObject({ automation_name: 'Renamed', automation_for: a.segmentId, automation_for_table: 'segments_' });
    await h.api(alice).post(`/automations/update?utr=${utr}`).send({ automation_for: '' }).expect(200);
    expect(await details(utr)).toMatchObject({ automation_for: null, automation_for_table: null });

    const clearLive = await h.api(alice).post(`/automations/update?utr=${utr}`).send({ unsubscribe_group_id: '' }).expect(409);
    expect(clearLive.body).toEqual({ status: 'failed', errors: 'A live automation needs its unsubscribe group; pause it before removing the group.' });
    await h.api(alice).get(`/automations/pause?utr=${utr}`).expect(200);
    await h.api(alice).post(`/automations/update?utr=${utr}`).send({ unsubscribe_group_id: '' }).expect(200);
    expect((await details(utr)).unsubscribe_group_id).toBeNull();
    await h.api(alice).get(`/automations/set-live?utr=${utr}`).expect(409);

    const invalid = await h.api(alice).post(`/automations/update?utr=${utr}`).send({ automation_name: ' ', unsubscribe_group_id: b.groupId }).expect(422);
    expect(invalid.body.errors).toEqual({ automation_name: ['The automation name field is required.'] });
    const foreign = await h.api(alice).post(`/automations/update?utr=${utr}`).send({ unsubscribe_group_id: b.groupId }).expect(422);
    expect(foreign.body.errors).toEqual({ unsubscribe_group_id: ['The selected unsubscribe group id is invalid.'] });
    const noUtr = await h.api(alice).post('/automations/update').send({ automation_name: 'x' }).expect(422);
    expect(noUtr.body.errors).toEqual({ utr: ['The utr field is required.'] });
  });

  test('when duplicated then a draft copy with its own utr and copies of the schedules appears', async () => {
    const utr = await addAutomation(h, alice, { automation_name: 'Original', unsubscribe_group_id: a.groupId, automation_for: `contacts_${a.contactTypeId}` });
    await h.api(alice).post('/automations/schedule/create').send(scheduleBody(utr, a.senderId, { subject: 'First' })).expect(200);
    await h.api(alice).post('/automations/schedule/create').send(scheduleBody(utr, a.senderId, { subject: 'Second', waiting_type: 'days', waiting_period: 2 })).expect(200);
    await h.api(alice).get(`/automations/set-live?utr=${utr}`).expect(200);

    const res = await h.api(alice).get(`/automations/duplicate?utr=${utr}`).expect(200);
    expect(res.body).toEqual({ status: 'success', message: { utr: expect.stringMatching(UUID) } });
    const copyUtr = res.body.message.utr;
    expect(copyUtr).not.toBe(utr);
    const original = await details(utr);
    expect(await details(copyUtr)).toEqual({
      ...original,
      id: expect.any(Number),
      utr: copyUtr,
      automation_name: 'Copy of Original',
      status: 0,
      live_at: null,
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: expect.stringMatching(TIMESTAMP),
    });
    const schedules = async (u: string) => (await h.api(alice).get(`/automations/schedule?utr=${u}`).expect(200)).body.message.automation_schedules;
    const [from, to] = [await schedules(utr), await schedules(copyUtr)];
    expect(to.map((s: { subject: string }) => s.subject)).toEqual(['First', 'Second']);
    expect(to[1]).toMatchObject({ waiting_type: 'days', waiting_period: 2, automation_id: (await details(copyUtr)).id });
    expect(to.map((s: { utr: string }) => s.utr)).not.toContain(from[0].utr);
  });

  test('when deleted then it is gone with its schedules; bulk delete takes ids and ignores other accounts', async () => {
    const utr = await addAutomation(h, alice, {});
    await h.api(alice).post('/automations/schedule/create').send(scheduleBody(utr, a.senderId)).expect(200);
    const res = await h.api(alice).delete(`/automations/delete?utr=${utr}`).expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Deleted Successfully' });
    await h.api(alice).get(`/automations/details?utr=${utr}`).expect(404, NOT_FOUND);
    await h.api(alice).get(`/automations/schedule?utr=${utr}`).expect(404);
    await h.api(alice).get(`/automations/set-live?utr=${utr}`).expect(404);
    await h.api(alice).delete(`/automations/delete?utr=${utr}`).expect(404);
    expect((await h.api(alice).get('/automations')).body.message.automations.map((x: { utr: string }) => x.utr)).not.toContain(utr);

    const one = await addAutomation(h, alice, {});
    const two = await addAutomation(h, alice, {});
    const bobs = await addAutomation(h, bob, {});
    const [id1, id2, bobId] = [(await details(one)).id, (await details(two)).id, (await details(bobs, bob)).id];
    const bulk = await h.api(alice).post('/automations/bulk-delete').type('form').send({ 'strIds[0]': id1, 'strIds[1]': id2, 'strIds[2]': bobId }).expect(200);
    expect(bulk.body).toEqual({ status: 'success', message: 'Deleted Successfully' });
    await h.api(alice).get(`/automations/details?utr=${one}`).expect(404);
    await h.api(alice).get(`/automations/details?utr=${two}`).expect(404);
    await details(bobs, bob);
    await h.api(alice).post('/automations/bulk-delete').type('form').send({ 'strIds[0]': bobId }).expect(404, NOT_FOUND);
    await expectBulkIdRules(h.api(alice), '/automations/bulk-delete');
  });

  test("when another account uses an automation's utr then every endpoint answers 404 and nothing changes", async () => {
    const utr = await addAutomation(h, alice, { automation_name: 'Private', unsubscribe_group_id: a.groupId });
    for (const path of ['details', 'duplicate', 'pause', 'set-live', 'schedule']) {
      await h.api(bob).get(`/automations/${path}?utr=${utr}`).expect(404, NOT_FOUND);
    }
    await h.api(bob).post(`/automations/update?utr=${utr}`).send({ automation_name: 'Stolen' }).expect(404, NOT_FOUND);
    await h.api(bob).post('/automations/schedule/create').send(scheduleBody(utr, b.senderId)).expect(404, NOT_FOUND);
    await h.api(bob).delete(`/automations/delete?utr=${utr}`).expect(404, NOT_FOUND);
    expect(await details(utr)).toMatchObject({ automation_name: 'Private', status: 0, deleted_at: null });
    expect((await h.api(alice).get(`/automations/schedule?utr=${utr}`)).body.message.automation_schedules).toEqual([]);
  });

  test('when the utr is missing or malformed then 422 or 404', async () => {
    const missing = await h.api(alice).get('/automations/details').expect(422);
    expect(missing.body).toEqual({ status: 'failed', errors: { utr: ['The utr field is required.'] } });
    await h.api(alice).get('/automations/set-live?utr=12345').expect(404, NOT_FOUND);
  });

  test('when a second group is assigned then set-live uses it', async () => {
    const groupId = await addGroup(h, alice, 'Later group');
    const utr = await addAutomation(h, alice, {});
    await h.api(alice).post(`/automations/update?utr=${utr}`).send({ unsubscribe_group_id: groupId }).expect(200);
    await h.api(alice).get(`/automations/set-live?utr=${utr}`).expect(200);
    expect(await details(utr)).toMatchObject({ status: 1, unsubscribe_group_id: String(groupId) });
  });
});
