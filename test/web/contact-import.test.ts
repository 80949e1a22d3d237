import fs from 'node:fs';
import { uploadDir } from '../../src/http/upload';
import { addContactType } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { asFragment, importProgressUntilDone, signIn, useTwoAccounts } from '../support/web';
import { until } from '../support/wait';

describe('dashboard CSV import', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);
  let type = 0;

  beforeAll(async () => {
    type = await addContactType(h, t.alice, 'Imported');
  });

  const upload = (csv: string, form: { contact_type_id?: string; name?: string; csrf?: string } = {}) => {
    const test = t.web.agent.post('/contacts/import').field('_csrf', form.csrf ?? t.web.csrf);
    if (form.contact_type_id !== '') test.field('contact_type_id', form.contact_type_id ?? String(type));
    return csv ? test.attach('file', Buffer.from(csv), form.name ?? 'people.csv') : test;
  };
  const leftoverUploads = () => (fs.existsSync(uploadDir(h.runtime.config)) ? fs.readdirSync(uploadDir(h.runtime.config)) : []);
  /** The upload is removed as its response closes, which may be just after the client has read it. */
  async function noUploadsLeft(): Promise<void> {
    await until(() => leftoverUploads().length === 0, 1_000, 'the upload to be removed').catch(() => undefined);
    expect(leftoverUploads()).toEqual([]);
  }
  const idOf = (location: string) => Number(/^\/contacts\/import\/(\d+)(\/columns)?$/.exec(location)?.[1]);

  /** The choices the mapping page shows pre-selected, one per column. */
  async function proposedColumns(id: number): Promise<string[]> {
    const page = await t.web.get(`/contacts/import/${id}/columns`).expect(200);
    return [...page.text.matchAll(/<select id="column-(\d+)" name="column\[\d+\]">([\s\S]*?)<\/select>/g)].map(
      (m) => /<option value="([^"]*)" selected>/.exec(m[2])?.[1] ?? '',
    );
  }

  /** Uploads a file and confirms the columns as proposed: answers the import's id. */
  async function uploadAndImport(csv: string): Promise<number> {
    const res = await upload(csv).expect(303);
    expect(res.headers.location).toMatch(/^\/contacts\/import\/\d+\/columns$/);
    const id = idOf(res.headers.location);
    const form: Record<string, string> = {};
    (await proposedColumns(id)).forEach((target, at) => (form[`column[${at}]`] = target));
    await t.web.post(`/contacts/import/${id}/columns`, form).expect(303).expect('location', `/contacts/import/${id}`);
    return id;
  }

  const progressUntilDone = (id: number) => importProgressUntilDone(t.web, id);

  test('when a CSV is uploaded then its page polls the progress until done, then shows the summary with the skipped rows', async () => {
    const csv = ['email,first_name', 'one@example.com,One', 'not-an-email,Bad', 'two@example.com,Two', ',Nobody', 'one@example.com,One again'].join('\n');
    const id = await uploadAndImport(csv);
    const page = await t.web.get(`/contacts/import/${id}`).expect(200);
    expect(page.text).toContain('Import of people.csv');
    expect(page.text).toContain('Into Imported');

    const done = await progressUntilDone(id);
    expect(done.trimStart()).toMatch(/^<div id="import-progress">/);
    expect(done).toContain('<span class="badge ok">Done</span>');
    expect(done).toContain('5 of 5 rows processed');
    expect(done).toContain('<progress class="import-bar" max="5" value="5"');
    expect(done).toContain('<p class="stat-label">Created</p><p class="stat-value">2</p>');
    expect(done).toContain('<p class="stat-label">Updated</p><p class="stat-value">1</p>');
    expect(done).toContain('<p class="stat-label">Skipped</p><p class="stat-value">2</p>');
    expect(done).toContain('<tr><td class="num">3</td><td>The email must be a valid email address.</td></tr>');
    expect(done).toContain('<tr><td class="num">5</td><td>The email field is required.</td></tr>');
    const emails = await h.runtime.db('contacts').where({ user_id: t.alice.user_id }).orderBy('email').pluck('email');
    expect(emails).toEqual(['one@example.com', 'two@example.com']);
    await noUploadsLeft();
    expect((await t.web.get('/contacts/import').expect(200)).text).toContain(`<a href="/contacts/import/${id}">people.csv</a>`);
  });

  test('when more than 100 rows are skipped then the page offers all of them as a CSV with their reasons and values', async () => {
    const lines = ['email,first_name', 'kept@example.com,Kept'];
    for (let i = 0; i < 150; i += 1) lines.push(`bad-${i},Name ${i}`);
    lines.push('x@example.com,"never closed');
    const id = await uploadAndImport(lines.join('\n'));
    const done = await progressUntilDone(id);
    expect(done).toContain(`<a href="/contacts/import/${id}/skipped.csv" class="button" hx-boost="false" download>Download all 151 skipped rows (CSV)</a>`);
    expect(done).toContain('The first 100 of 151 skipped rows; the download has all of them with their reasons.');

    const csv = await t.web.get(`/contacts/import/${id}/skipped.csv`).expect(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toBe(`attachment; filename=skipped-rows-${id}.csv`);
    const rows = csv.text.replace(/^\uFEFF/, '').trimEnd().split('\r\n');
    expect(rows).toHaveLength(1 + 151);
    expect(rows[0]).toBe('Row,Reason,email,first_name');
    expect(rows[1]).toBe('3,The email must be a valid email address.,bad-0,Name 0');
    expect(rows[150]).toBe('152,The email must be a valid email address.,bad-149,Name 149');
    expect(rows[151]).toBe('153,"A quote opened in this row is never closed, so the row could not be read (reading went on at the next line)."');

    const bob = await signIn(h, t.bob);
    await bob.get(`/contacts/import/${id}/skipped.csv`).expect(404);
  });

  test('when a Mailchimp export is uploaded then the mapping page shows its first rows with each column pre-filled, and the choices are imported', async () => {
    const mailchimp = fs.readFileSync(`${__dirname}/../fixtures/imports/subscribed_members_export_4f2a9c1b7e.csv`, 'utf8');
    const res = await upload(mailchimp).expect(303);
    const id = idOf(res.headers.location);
    const page = await t.web.get(`/contacts/import/${id}/columns`).expect(200);
    expect(page.text).toContain('Read as utf-8, separated by commas.');
    expect(page.text).toContain('<label for="column-0">Email Address</label>');
    expect(page.text).toContain('<td>José</td>');
    const proposed = await proposedColumns(id);
    expect(proposed.slice(0, 5)).toEqual(['email', 'first_name', 'last_name', 'address_line1', 'ignore']);
    // The job waits for the choice: the status page sends there.
    await t.web.get(`/contacts/import/${id}`).expect(303).expect('location', `/contacts/import/${id}/columns`);

    // Choosing no email column is refused on the page, which keeps the choices.
    const noEmail: Record<string, string> = {};
    proposed.forEach((target, at) => (noEmail[`column[${at}]`] = at === 0 ? 'ignore' : target));
    const refused = await t.web.post(`/contacts/import/${id}/columns`, noEmail).expect(422);
    expect(refused.text).toContain('Choose the column that holds the email addresses.');

    const form: Record<string, string> = {};
    proposed.forEach((target, at) => (form[`column[${at}]`] = at === 3 ? 'ignore' : target));
    await t.web.post(`/contacts/import/${id}/columns`, form).expect(303);
    await progressUntilDone(id);
    const anna = await h.runtime.db('contacts').where({ user_id: t.alice.user_id, email_key: 'anna.schmidt@example.com' }).first('first_name', 'last_name', 'address_line1');
    expect(anna).toMatchObject({ first_name: 'Anna', last_name: 'Schmidt' });
    expect(anna.address_line1 ?? '').toBe('');
    // Started once: the mapping page of a started import sends to its status.
    await t.web.get(`/contacts/import/${id}/columns`).expect(303).expect('location', `/contacts/import/${id}`);
    const status = await t.web.get(`/contacts/import/${id}`).expect(200);
    expect(status.text).toContain(`<a href="/contacts/import?contact_type_id=${type}" class="button">Import another file</a>`);
    await noUploadsLeft();
  });

  test('when the file has no email column then the mapping page proposes none and refuses to start', async () => {
    const res = await upload('name\nNobody').expect(303);
    const id = idOf(res.headers.location);
    expect(await proposedColumns(id)).toEqual(['full_name']);
    const refused = await t.web.post(`/contacts/import/${id}/columns`, { 'column[0]': 'full_name' }).expect(422);
    expect(refused.text).toContain('Choose the column that holds the email addresses.');
    // Cancelling removes the waiting upload and goes back to the form for the same contact type.
    await t.web.post(`/contacts/import/${id}/cancel`).expect(303).expect('location', `/contacts/import?contact_type_id=${type}`);
    await noUploadsLeft();
    expect((await t.web.get(`/contacts/import/${id}`).expect(200)).text).toContain('The upload was cancelled before its columns were chosen.');
  });

  test('when the upload is refused then the form shows the shared messages next to its fields and keeps no file', async () => {
    const none = await upload('', { contact_type_id: '' }).expect(422);
    expect(none.text).toContain('<p class="field-error" id="contact_type_id-error">Choose a contact type.</p>');
    expect(none.text).toContain('<p class="field-error" id="file-error">The file field is required.</p>');
    const wrongType = await upload('email\na@example.com', { name: 'people.xlsx' }).expect(422);
    expect(wrongType.text).toContain('<p class="field-error" id="file-error">The file must be a file of type: csv, txt.</p>');
    const bobType = await addContactType(h, t.bob, 'Bob type');
    const foreign = await upload('email\na@example.com', { contact_type_id: String(bobType) }).expect(422);
    expect(foreign.text).toContain('<p class="field-error" id="contact_type_id-error">Choose a contact type from the list.</p>');
    await upload('email\na@example.com', { csrf: 'forged' }).expect(403);
    await noUploadsLeft();
    expect(await h.runtime.db('contacts').where({ email_key: 'a@example.com' }).first()).toBeUndefined();
  });

  test('when an import is running then its fragment shows rows processed of the total and asks for itself again', async () => {
    const now = new Date().toISOString();
    const row = { user_id: t.alice.user_id, contact_type_id: type, file_name: 'big.csv', status: 'running', rows_total: 10, rows_done: 4, created_at: now, updated_at: now };
    const [{ id }] = await h.runtime.db('imports').insert(row).returning('id');
    const res = await asFragment(t.web.get(`/contacts/import/${id}`), 'import-progress').expect(200);
    expect(res.text).toContain(`<div id="import-progress" hx-get="/contacts/import/${id}" hx-trigger="every 1s" hx-swap="outerHTML">`);
    expect(res.text).toContain('4 of 10 rows processed');
    expect(res.text).toContain('<progress class="import-bar" max="10" value="4"');

    // One whose process went away long ago (no progress written since) says so and stops polling.
    const [{ id: lost }] = await h.runtime.db('imports').insert({ ...row, updated_at: '2026-01-01T00:00:00.000Z' }).returning('id');
    const stale = await asFragment(t.web.get(`/contacts/import/${lost}`), 'import-progress').expect(200);
    expect(stale.text).not.toContain('hx-trigger');
    expect(stale.text).toContain('The import stopped before it finished (the server was restarted).');
  });

  test('when a file spans several chunks then the import reports growing progress, ending at every row', async () => {
    const file = `${uploadDir(h.runtime.config)}/progress-test.csv`;
    fs.mkdirSync(uploadDir(h.runtime.config), { recursive: true });
    fs.writeFileSync(file, ['email', ...Array.from({ length: 8000 }, (_, i) => `progress${i}@example.com`)].join('\n'));
    const heard: number[] = [];
    const summary = await h.runtime.services.contactImport.importFile({ userId: t.alice.user_id }, type, file, { progress: (n) => heard.push(n) });
    fs.rmSync(file);
    expect(summary).toMatchObject({ rows: 8000, created: 8000, skipped: 0 });
    expect(heard.length).toBeGreaterThan(2);
    expect(heard).toEqual([...heard].sort((a, b) => a - b));
    expect(heard.at(-1)).toBe(8000);
  });

  test('when the sample is downloaded then it is the shared sample file', async () => {
    const res = await t.web.get('/contacts/import/sample.csv').expect(200);
    expect(res.headers['content-disposition']).toBe('attachment; filename=contacts-sample.csv');
    expect(res.text.split('\r\n')[0]).toBe('first_name,last_name,email,alt_email,country,state,city,address_line1,address_line2,state_province_region,postal_code');
  });

  test('when another account’s import is addressed then it answers 404', async () => {
    const bobType = await addContactType(h, t.bob, 'Bob imports');
    const id = await h.runtime.services.importJobs.start({ userId: t.bob.user_id }, { contactTypeId: bobType, file: '/nonexistent.csv', fileName: 'bob.csv' });
    await h.runtime.services.importJobs.drain();
    await t.web.get(`/contacts/import/${id}`).expect(404);
  });
});
