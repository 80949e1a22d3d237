import request from 'supertest';
import { useHarness } from '../support/harness';
import { metaCsrf, useTwoAccounts } from '../support/web';

/** The dashboard's forms, the sign-in form and the public preference page under hostile bodies: never a 500. */
describe('hostile form bodies', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);

  const raw = (test: request.Test, headers: Record<string, string>, body: string) =>
    test.set(headers).serialize((b: unknown) => b as string).send(body);
  const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };
  const title = (html: string) => /<title>([^<]*?) · Campaigns<\/title>/.exec(html)?.[1];
  const typeNames = async () => (await h.runtime.db('contact_types').where({ user_id: t.alice.user_id }).pluck('name')) as string[];

  test('when a dashboard form claims gzip, deflate or br but is not then a 400 page, and 415 for an unknown encoding', async () => {
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const res = await raw(t.web.agent.post('/contact-types/new'), { ...FORM, 'Content-Encoding': encoding }, `_csrf=${t.web.csrf}&name=Liar`);
      expect({ encoding, status: res.status }).toEqual({ encoding, status: 400 });
      expect(res.text).toContain('The form could not be read. Please send it again.');
    }
    const unknown = await raw(t.web.agent.post('/contact-types/new'), { ...FORM, 'Content-Encoding': 'zstd-ish' }, `_csrf=${t.web.csrf}&name=Liar`);
    expect(unknown.status).toBe(415);
    const upload = await t.web.agent.post('/contacts/import').set('X-CSRF-Token', t.web.csrf).set('Content-Encoding', 'gzip')
      .field('contact_type_id', '1').attach('file', Buffer.from('email\na@example.com\n'), 'c.csv');
    expect(upload.status).toBe(415);
    expect(await typeNames()).not.toContain('Liar');
  });

  test('when the sign-in form claims an encoding it does not have then a 400 page (415 for an unknown one), not a 500', async () => {
    const agent = request.agent(h.runtime.app);
    const token = metaCsrf((await agent.get('/login').expect(200)).text);
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const res = await raw(agent.post('/login'), { ...FORM, 'Content-Encoding': encoding }, `_csrf=${token}&email=a%40example.com&password=x`);
      expect({ encoding, status: res.status, title: title(res.text) }).toEqual({ encoding, status: 400, title: 'Bad request' });
    }
    const unknown = await raw(agent.post('/login'), { ...FORM, 'Content-Encoding': 'zstd-ish' }, `_csrf=${token}&email=a%40example.com&password=x`);
    expect(unknown.status).toBe(415);
  });

  test('when a form key nests deeper than the parser allows then a 422 page', async () => {
    const res = await raw(t.web.agent.post('/contact-types/new'), FORM, `_csrf=${t.web.csrf}&name${'[a]'.repeat(40)}=x`);
    expect(res.status).toBe(422);
    expect(res.text).toContain('The body is nested too deeply.');
  });

  test('when a form field that holds one value comes nested then the form comes back with the message under that field', async () => {
    const res = await raw(t.web.agent.post('/contact-types/new'), FORM, `_csrf=${t.web.csrf}&name[a]=Nested`);
    expect(res.status).toBe(422);
    expect(res.text).toContain('<p class="field-error" id="name-error">The name must be a string.</p>');
    expect(await typeNames()).not.toContain('Nested');
    const segment = await raw(t.web.agent.post('/segments/new'), FORM, `_csrf=${t.web.csrf}&segment_name=Nested&contact_type_id[a]=1&cond[0][field][a]=email&cond[0][operator]=is&cond[0][value][0]=x`);
    expect(segment.status).toBe(422);
    expect(segment.text).toContain('The contact type id must be an integer.');
  });

  test('when a form field holds a control character then the form comes back with the message under that field', async () => {
    const res = await t.web.post('/contact-types/new', { name: 'Nul\u0000name' }).expect(422);
    expect(res.text).toContain('<p class="field-error" id="name-error">The name must not contain control characters.</p>');
    const search = await t.web.get('/contacts?search=a%00b').expect(422);
    expect(search.text).toContain('The search must not contain control characters.');
    expect(await typeNames()).not.toContain('Nul\u0000name');
  });

  test('when a multipart form has too many fields then 413, on the dashboard and on the preference page', async () => {
    const boundary = 'many-fields';
    const body = (count: number) =>
      Array.from({ length: count }, (_, i) => `--${boundary}\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nx\r\n`).join('') + `--${boundary}--\r\n`;
    const multipart = { 'Content-Type': `multipart/form-data; boundary=${boundary}` };
    const upload = await raw(t.web.agent.post('/contacts/import'), { ...multipart, 'X-CSRF-Token': t.web.csrf }, body(50));
    expect({ status: upload.status, title: title(upload.text) }).toEqual({ status: 413, title: 'Too large' });
    const preferences = await raw(request(h.runtime.app).post('/unsubscribe/not-a-token'), multipart, body(500));
    expect(preferences.status).toBe(413);
  });

  test('when a dashboard form comes as JSON or plain text then it is read as an empty form: the page asks for the fields, no 500', async () => {
    for (const [type, body] of [['application/json', '{"name":"Json"}'], ['text/plain', 'name=Plain']]) {
      const res = await raw(t.web.agent.post('/notification-recipients/delete'), { 'Content-Type': type, 'X-CSRF-Token': t.web.csrf }, body);
      expect({ type, status: res.status }).toEqual({ type, status: 422 });
    }
    const res = await raw(t.web.agent.post('/contact-types/new'), { 'Content-Type': 'application/json', 'X-CSRF-Token': t.web.csrf }, '{"name":"Json"}').expect(422);
    expect(res.text).toContain('The name field is required.');
  });
});

