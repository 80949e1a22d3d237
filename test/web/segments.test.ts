import { addContact, addContactType, addCustomField, countryId } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { asFragment, useTwoAccounts } from '../support/web';

describe('dashboard segments', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);
  let type = 0;

  beforeAll(async () => {
    type = await addContactType(h, t.alice, 'Customers');
    await addCustomField(h, t.alice, 'age', 'number');
    const fr = await countryId(h, 'FR');
    for (const [email, age] of [['ann@acme.example', 25], ['bea@acme.example', 41], ['cid@other.example', 30]] as const) {
      await addContact(h, t.alice, { contact_type_id: type, email, country: fr, first_name: email.slice(0, 3), custom_field: { age: String(age) } });
    }
  });

  const query = (params: Record<string, string>) => new URLSearchParams(params).toString();
  const ctx = () => ({ userId: t.alice.user_id });

  test('when the builder changes then each condition offers the operators of its field type and as many values as its operator takes', async () => {
    const form = await t.web.get('/segments/new').expect(200);
    expect(form.text).toContain('No conditions: the segment holds every contact of the type.');
    const first = await asFragment(t.web.get('/segments/builder?add=1'), 'segment-builder').expect(200);
    expect(first.text).toContain('<select id="cond-0-field" name="cond[0][field]"');
    expect(first.text).toContain('<option value="is" selected>is</option>');
    expect(first.text).toContain('<optgroup label="Custom fields">');

    const number = await asFragment(t.web.get(`/segments/builder?${query({ 'cond[0][field]': 'age', 'cond[0][operator]': 'is between', 'cond[0][value]': '20' })}`), 'segment-builder').expect(200);
    expect(number.text.trimStart()).toMatch(/^<div id="segment-builder"/);
    expect(number.text).toContain('<option value="greater than">greater than</option>');
    expect(number.text).not.toContain('<option value="contains"');
    expect(number.text).toContain('name="cond[0][value]" type="number" value="20"');
    expect(number.text).toContain('name="cond[0][value2]" type="number" value=""');

    const added = await t.web.get(`/segments/builder?${query({ 'cond[0][field]': 'email', 'cond[0][operator]': 'is empty', add: '1' })}`).expect(200);
    expect(added.text).not.toContain('name="cond[0][value]"');
    expect(added.text).toContain('name="cond[1][field]"');
    expect(added.text).toContain('name="cond[1][value]" type="text"');

    const removed = await t.web.get(`/segments/builder?${query({ 'cond[0][field]': 'email', 'cond[0][operator]': 'is', 'cond[1][field]': 'created_at', 'cond[1][operator]': 'is after', remove: '0' })}`).expect(200);
    expect(removed.text).not.toContain('name="cond[1][field]"');
    expect(removed.text).toContain('name="cond[0][value]" type="date"');
  });

  test('when conditions are typed then the live count is what saving the segment puts in it', async () => {
    const conditions = { contact_type_id: String(type), query_type: 'and', 'cond[0][field]': 'email', 'cond[0][operator]': 'ends with', 'cond[0][value]': '@acme.example', 'cond[1][field]': 'age', 'cond[1][operator]': 'greater than', 'cond[1][value]': '29' };
    const count = await asFragment(t.web.get(`/segments/count?${query(conditions)}`), 'segment-count').expect(200);
    expect(count.text).toContain('<strong>1</strong> contact matches now');
    const either = await t.web.get(`/segments/count?${query({ ...conditions, query_type: 'or' })}`).expect(200);
    expect(either.text).toContain('<strong>3</strong> contacts match now');

    const saved = await t.web.post('/segments/new', { ...conditions, query_type: 'or', segment_name: 'Acme or older' }).expect(303);
    const id = Number(/^\/segments\/(\d+)$/.exec(saved.headers.location)?.[1]);
    expect(await h.runtime.services.segments.get(ctx(), id)).toMatchObject({
      select_field: ['email', 'age'],
      select_operator: ['ends with', 'greater than'],
      value: ['@acme.example', '29'],
      query_type: 'or',
      segment_emails_count: 3,
    });
    const page = await t.web.get(saved.headers.location).expect(200);
    expect(page.text).toContain('Segment saved; its matching contacts are its recipients.');
    // Fields by their words: the reserved field's label, the custom field's name (it has no label of its own).
    expect(page.text).toContain('Email ends with “@acme.example” or age greater than “29”');
    expect(page.text).toContain('<td>cid@other.example</td>');
  });

  test('when the conditions cannot be counted yet then the count says why instead of failing', async () => {
    const res = await t.web.get(`/segments/count?${query({ contact_type_id: String(type), 'cond[0][field]': 'age', 'cond[0][operator]': 'is', 'cond[0][value]': '' })}`).expect(200);
    expect(res.text).toContain('Not counted yet: Fill in the value of this condition.');
  });

  test('when a condition is wrong then its message shows beside it and the builder keeps it', async () => {
    const res = await t.web
      .post('/segments/new', { segment_name: 'Bad', contact_type_id: String(type), 'cond[0][field]': 'email', 'cond[0][operator]': 'is empty', 'cond[1][field]': 'age', 'cond[1][operator]': 'is between', 'cond[1][value]': 'ten', 'cond[1][value2]': '40' })
      .expect(422);
    expect(res.text).toContain('<p class="field-error condition-error">The value must be a number.</p>');
    expect(res.text).toContain('name="cond[1][value]" type="number" value="ten"');
    expect(res.text).toContain('value="Bad"');
    const missing = await t.web.post('/segments/new', {}).expect(422);
    expect(missing.text).toContain('<p class="field-error" id="segment_name-error">The segment name field is required.</p>');
    expect(missing.text).toContain('<p class="field-error" id="contact_type_id-error">Choose a contact type.</p>');
  });

  test('when a segment is edited then the form holds its conditions and saving refreshes its recipients', async () => {
    const id = await h.runtime.services.segments.save(ctx(), { segment_name: 'Young', contact_type_id: type, select_field: ['age'], select_operator: ['less than'], value: ['30'], query_type: 'and' });
    const form = await t.web.get(`/segments/${id}/edit`).expect(200);
    expect(form.text).toContain('<option value="less than" selected>less than</option>');
    expect(form.text).toContain('name="cond[0][value]" type="number" value="30"');
    await t.web.post(`/segments/${id}/edit`, { segment_name: 'Older', contact_type_id: String(type), 'cond[0][field]': 'age', 'cond[0][operator]': 'is between', 'cond[0][value]': '35', 'cond[0][value2]': '50' }).expect(303);
    const emails = (await h.runtime.services.segments.recipientsPage(ctx(), id, { page: 1, perPage: 10 })).rows.map((r) => r.email);
    expect(emails).toEqual(['bea@acme.example']);
  });

  test('when recipients are added by hand and removed then the list follows, with messages', async () => {
    const id = await h.runtime.services.segments.save(ctx(), { segment_name: 'Manual', contact_type_id: type, select_field: ['email'], select_operator: ['is'], value: ['nobody@example.com'], query_type: 'and' });
    await t.web.post(`/segments/${id}/recipients`, { first_name: 'Hand', last_name: 'Added', email: 'hand@example.com' }).expect(303);
    const page = await t.web.get(`/segments/${id}`).expect(200);
    expect(page.text).toContain('hand@example.com added to the segment.');
    expect(page.text).toContain('<span class="muted">added by hand</span>');
    const bad = await t.web.post(`/segments/${id}/recipients`, { first_name: '', last_name: 'X', email: 'nope' }).expect(422);
    expect(bad.text).toContain('<p class="field-error" id="first_name-error">The first name field is required.</p>');
    expect(bad.text).toContain('<p class="field-error" id="email-error">The email must be a valid email address.</p>');
    const [row] = (await h.runtime.services.segments.recipientsPage(ctx(), id, { page: 1, perPage: 10 })).rows;
    const res = await asFragment(t.web.post(`/segments/${id}/recipients/delete`, { ids: String(row.id) }), 'segment-recipient-list').expect(200);
    expect(res.text).toContain('No recipients: no contact matches the conditions yet.');
    expect(res.text).toContain('Recipient removed.');
  });

  test('when the list is shown and a segment deleted through htmx then the list comes back without it', async () => {
    const id = await h.runtime.services.segments.save(ctx(), { segment_name: 'Doomed', contact_type_id: type, select_field: [], select_operator: [], value: [], query_type: 'and' });
    const list = await t.web.get('/segments').expect(200);
    expect(list.text).toContain(`<a href="/segments/${id}">Doomed</a>`);
    expect(list.text).toContain('every contact of the type');
    const res = await asFragment(t.web.post(`/segments/${id}/delete`), 'segment-list').expect(200);
    expect(res.text).not.toContain('Doomed');
    expect(res.text).toContain('Segment deleted.');
  });

  test('when another account’s segment is addressed then every page and form answers 404', async () => {
    const bobType = await addContactType(h, t.bob, 'Bob type');
    const id = await h.runtime.services.segments.save({ userId: t.bob.user_id }, { segment_name: 'Bob seg', contact_type_id: bobType, select_field: [], select_operator: [], value: [], query_type: 'and' });
    await t.web.get(`/segments/${id}`).expect(404);
    await t.web.get(`/segments/${id}/edit`).expect(404);
    await t.web.post(`/segments/${id}/edit`, { segment_name: 'Mine', contact_type_id: String(type) }).expect(404);
    await t.web.post(`/segments/${id}/delete`).expect(404);
    await t.web.post(`/segments/${id}/recipients`, { first_name: 'A', last_name: 'B', email: 'sneak@example.com' }).expect(404);
    await t.web.post(`/segments/${id}/recipients/delete`, { ids: '1' }).expect(404);
    const count = await t.web.get(`/segments/count?${query({ contact_type_id: String(bobType) })}`).expect(200);
    expect(count.text).toContain('Not counted yet: Choose a contact type from the list.');
    expect(await h.runtime.services.segments.get({ userId: t.bob.user_id }, id)).toMatchObject({ segment_name: 'Bob seg' });
  });
});
