import { createWorkerRuntime } from '../../src/workers/worker-runtime';
import { countryId, newsDesk } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { linkToken } from '../support/team';
import { axeViolations } from './axe';
import { eventually, useBrowser, fillComposer } from './browser';

const PHONE = { width: 390, height: 844 };
const EDITOR_PASSWORD = 'editor chooses a long one';

describe('dashboard in Chromium: a team', () => {
  const sink = useSmtpSink();
  const h = useHarness({ SMTP_URL: () => sink.url });
  const b = useBrowser(h);

  test('when the owner invites an editor on a phone then the editor accepts, signs in, builds and sends a campaign, and cannot open the Team page', async () => {
    const account = await h.account();
    const { ctx, type } = await newsDesk(h, account, 'Customers');
    const { services } = h.runtime;
    const fr = await countryId(h, 'FR');
    for (const [email, first] of [['ann@friends.example', 'Ann'], ['bob@friends.example', 'Bob']]) {
      await services.contacts.add(ctx, { contact_type_id: type, email, country: fr, text: { first_name: first } });
    }
    await services.segments.save(ctx, { segment_name: 'Friends', contact_type_id: type, select_field: ['email'], select_operator: ['ends with'], value: ['@friends.example'], query_type: 'and' });

    // The owner invites, on a phone.
    const owner = await b.page();
    await owner.setViewportSize(PHONE);
    await b.signIn(owner, account);
    await owner.getByRole('button', { name: 'Menu' }).click();
    await owner.getByRole('navigation').getByRole('link', { name: 'Team' }).click();
    await owner.getByRole('heading', { name: 'Team' }).waitFor();
    expect(await axeViolations(owner)).toEqual([]);
    await owner.getByLabel('Email address').fill('eve@team.example');
    await owner.getByLabel('Name').fill('Eve');
    await owner.getByLabel('Role').selectOption('editor');
    await owner.getByRole('button', { name: 'Send invitation' }).click();
    await owner.getByText('Invitation sent to eve@team.example.').waitFor();
    await owner.getByRole('cell', { name: 'Invited' }).waitFor();
    expect(await axeViolations(owner)).toEqual([]);
    expect(await owner.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    expect(b.problems).toEqual([]);

    // The editor opens the mailed link, chooses a password and lands in the dashboard.
    const token = await linkToken(sink, 'eve@team.example', 'invitation');
    const editor = await b.page();
    await editor.setViewportSize(PHONE);
    await editor.goto(`/invitation/${token}`);
    await editor.getByText('You are invited as editor').waitFor();
    expect(await axeViolations(editor)).toEqual([]);
    await editor.getByLabel('Password', { exact: true }).fill(EDITOR_PASSWORD);
    await editor.getByLabel('Password again').fill(EDITOR_PASSWORD);
    await editor.getByRole('button', { name: 'Join and sign in' }).click();
    await editor.waitForURL(`${b.baseUrl}/`);
    await editor.getByText('Welcome, Eve. You are signed in.').waitFor();

    // Signs out, and in again with the new password.
    await editor.getByRole('button', { name: 'Menu' }).click();
    await editor.getByRole('button', { name: 'Sign out' }).click();
    await editor.waitForURL(/\/login/);
    await editor.getByLabel('Email').fill('eve@team.example');
    await editor.getByLabel('Password').fill(EDITOR_PASSWORD);
    await editor.getByRole('button', { name: 'Sign in' }).click();
    await editor.waitForURL(`${b.baseUrl}/`);

    // The menu has no Team link for an editor.
    await editor.getByRole('button', { name: 'Menu' }).click();
    const nav = editor.getByRole('navigation');
    await nav.getByRole('link', { name: 'Single sends' }).waitFor();
    expect(await nav.getByRole('link', { name: 'Team' }).count()).toBe(0);
    expect(await nav.getByRole('link', { name: 'API keys' }).count()).toBe(0);
    expect(await axeViolations(editor)).toEqual([]);

    // Builds and sends a campaign.
    await nav.getByRole('link', { name: 'Single sends' }).click();
    await editor.getByRole('link', { name: 'New single send' }).first().click();
    await fillComposer(editor, { name: 'Hello from Eve', subject: 'Hello ((first_name))', preheader: 'From the team' });
    await editor.getByLabel('Welcome').check();
    await eventually('the editor holds the template', async () => (await editor.locator('#field-template_html').inputValue()).includes('Welcome aboard'));
    await editor.getByLabel('Segment: Friends').first().check();
    const worker = createWorkerRuntime(h.runtime, { pollMs: 100 });
    worker.worker.start();
    try {
      await editor.getByRole('button', { name: 'Save single send' }).click();
      await editor.getByText('Draft saved.', { exact: false }).waitFor();
      await editor.getByRole('link', { name: 'Send now…' }).click();
      await editor.getByRole('button', { name: 'Send to 2 recipients' }).click();
      await editor.getByText('Sending has started.').waitFor();
      await editor.locator('#send-stats').getByText('Sent', { exact: true }).waitFor({ timeout: 20_000 });
    } finally {
      await worker.close();
    }
    const delivered = sink.messages.filter((m) => /^Hello (Ann|Bob)$/.test(String(m.parsed.subject))).map((m) => m.parsed.subject).sort();
    expect(delivered).toEqual(['Hello Ann', 'Hello Bob']);

    // And cannot open the Team page, even by its address.
    const refused = await editor.goto('/team');
    expect(refused?.status()).toBe(403);
    await editor.getByText('You do not have permission to do this.').waitFor();
    expect(await axeViolations(editor)).toEqual([]);
    expect(await editor.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    expect(b.problems).toEqual([]);
  });
});
