import { addContactType, addVerifiedSender, berlin } from '../support/fixtures';
import { startDnsServer, TestDnsServer } from '../support/dns';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { linkToken } from '../support/team';
import { eventually, useBrowser } from './browser';

/**
 * The account speaks as itself and to the right person: the home page greets whoever signed in,
 * invitations and signup confirmations come from the account's own sender, and the SPF hint
 * names what the proposed record holds (a relay nobody tested says so: relays.test.ts).
 */
describe('the account’s own voice in Chromium', () => {
  let dns: TestDnsServer;
  beforeAll(async () => {
    dns = await startDnsServer();
  });
  afterAll(() => dns.close());
  const sink = useSmtpSink();
  const h = useHarness({ SMTP_URL: () => sink.url, DNS_SERVERS: () => dns.address });
  const b = useBrowser(h);

  test('when the owner invites an editor then the mail comes from the account’s sender and says who invited them as what, and the editor’s home page greets the editor', async () => {
    const { account, page: owner } = await b.newcomer();
    await addVerifiedSender(h, account, await berlin(h), { from_name: 'Acme News', from_email: 'news@acme.example' });
    await h.runtime.db('team_users').where({ user_id: account.user_id, role: 'owner' }).update({ name: 'Olga Owner' });
    await h.runtime.db('accounts').where({ id: account.user_id }).update({ name: 'Acme' });
    await b.signIn(owner, account);
    await owner.getByRole('heading', { name: 'Welcome, Olga Owner' }).waitFor();

    await owner.goto('/team');
    await owner.getByLabel('Email address').fill('eve@team.example');
    await owner.getByLabel('Name').fill('Eve');
    await owner.getByLabel('Role').selectOption('editor');
    await owner.getByRole('button', { name: 'Send invitation' }).click();
    await owner.getByText('Invitation sent to eve@team.example.').waitFor();

    const [mail] = sink.messages.filter((m) => m.to.includes('eve@team.example'));
    expect(mail.parsed.from?.value).toEqual([{ name: 'Acme News', address: 'news@acme.example' }]);
    expect(mail.parsed.subject).toBe('Olga Owner invited you to Acme');
    expect(mail.parsed.text).toContain('Olga Owner invited you to work in Acme as an editor (audience, campaigns, automations and templates).');

    const editor = await b.page();
    await editor.goto(`/invitation/${await linkToken(sink, 'eve@team.example', 'invitation')}`);
    await editor.getByLabel('Password', { exact: true }).fill('editor chooses a long one');
    await editor.getByLabel('Password again').fill('editor chooses a long one');
    await editor.getByRole('button', { name: 'Join and sign in' }).click();
    await editor.waitForURL(`${b.baseUrl}/`);
    await editor.getByRole('heading', { name: 'Welcome, Eve' }).waitFor();
    expect(await editor.getByRole('heading', { level: 1 }).innerText()).toBe('Welcome, Eve');
    expect(b.problems).toEqual([]);
  });

  test('when the owner makes a signup form then it proposes the account’s verified sender and the confirmation comes from it', async () => {
    const { account, page } = await b.newcomer();
    await addContactType(h, account, 'Readers');
    const sender = await addVerifiedSender(h, account, await berlin(h), { from_name: 'Acme News', from_email: 'news@acme.example' });
    await b.signIn(page, account);
    await page.goto('/signup-forms/new');
    expect(await page.getByLabel('Confirmation email from').inputValue()).toBe(String(sender));
    await page.getByLabel('Name', { exact: true }).fill('Monthly letter');
    await page.getByLabel('Contact type').selectOption({ label: 'Readers' });
    await page.getByRole('button', { name: 'Save signup form' }).click();
    await page.getByText('Signup form created.').waitFor();

    const form = (await h.runtime.services.signupForms.list({ userId: account.user_id }))[0];
    const visitor = await b.page();
    await visitor.goto(`/subscribe/${form.public_id}`);
    await visitor.getByLabel('Email address').fill('lena@example.org');
    await visitor.getByRole('button', { name: 'Subscribe' }).click();
    await visitor.getByRole('heading', { name: 'Check your inbox' }).waitFor();
    await eventually('the confirmation arrives', async () => sink.messages.some((m) => m.to.includes('lena@example.org')));
    const mail = sink.messages.find((m) => m.to.includes('lena@example.org'))!;
    expect(mail.parsed.from?.value).toEqual([{ name: 'Acme News', address: 'news@acme.example' }]);
    expect(b.problems).toEqual([]);
  });

  test('when the owner adds a domain then the SPF hint names the terms its proposed record holds', async () => {
    const { account, page } = await b.newcomer();
    await b.signIn(page, account);
    await page.goto('/domains');
    await page.getByLabel('Domain').fill('acme.example');
    await page.getByRole('button', { name: 'Add domain' }).click();
    const spf = await page.locator('#record-2-value').inputValue();
    expect(spf).toBe('v=spf1 mx ~all');
    await page.getByText('If the domain already has an SPF record, add mx to it, before its closing all, rather than publishing a second one.').waitFor();
    expect(b.problems).toEqual([]);
  });
});
