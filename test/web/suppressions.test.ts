import { nowValue } from '../../src/db/dialect';
import { suppressAddress } from '../../src/services/delivery/ledger';
import { useHarness, TestAccount } from '../support/harness';
import { asFragment, useTwoAccounts } from '../support/web';

describe('dashboard suppression page', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);

  const suppress = (account: TestAccount, email: string, diagnostic: string, category: 'hard_bounce' | 'complaint' = 'hard_bounce') =>
    suppressAddress(h.runtime.db, { userId: account.user_id, email, emailKey: email.toLowerCase(), category, diagnostic, source: 'dsn', now: nowValue() });
  const idOf = async (account: TestAccount, email: string) =>
    (await h.runtime.services.suppressions.list({ userId: account.user_id })).rows.find((r) => r.email_address === email)!.id;

  test('when addresses bounced then the page lists each with its reason and the mail system’s words, escaped', async () => {
    await suppress(t.alice, 'gone@example.org', 'smtp; 550 5.1.1 <gone@example.org>: Recipient address rejected');
    await suppress(t.alice, 'angry@example.org', 'abuse report', 'complaint');
    await suppress(t.bob, 'bobs@example.org', 'not alice’s');
    const page = await t.web.get('/suppressions').expect(200);
    expect(page.text).toContain('<td>gone@example.org</td>');
    expect(page.text).toContain('Hard bounce');
    expect(page.text).toContain('smtp; 550 5.1.1 &lt;gone@example.org&gt;: Recipient address rejected');
    expect(page.text).toContain('Spam complaint');
    expect(page.text).not.toContain('bobs@example.org');
  });

  test('when the list is searched then only matching addresses come back, as the list fragment', async () => {
    const res = await asFragment(t.web.agent.get('/suppressions?search=GONE'), 'suppression-list').expect(200);
    expect(res.text.trimStart()).toMatch(/^<div id="suppression-list">/);
    expect(res.text).toContain('gone@example.org');
    expect(res.text).not.toContain('angry@example.org');
    const none = await t.web.get('/suppressions?search=nobody').expect(200);
    expect(none.text).toContain('No suppressed address matches “nobody”.');
  });

  test('when an address is reinstated then it leaves the list with a message; another account’s address is refused', async () => {
    const id = await idOf(t.alice, 'gone@example.org');
    const res = await asFragment(t.web.agent.post('/suppressions/reinstate').type('form').send(`_csrf=${t.web.csrf}&ids=${id}`), 'suppression-list').expect(200);
    expect(res.text).not.toContain('gone@example.org');
    expect(res.text).toContain('Address reinstated.');
    await t.web.post('/suppressions/reinstate', { ids: String(await idOf(t.bob, 'bobs@example.org')) }).expect(404);
    expect((await h.runtime.services.suppressions.list({ userId: t.bob.user_id })).rows).toHaveLength(1);
  });

  test('when addresses are suppressed by hand then they show as added by hand; an invalid one is named next to the field', async () => {
    const res = await t.web.post('/suppressions', { email_address: 'hand@example.org\r\nother@example.org' }).expect(303);
    expect(res.headers.location).toBe('/suppressions');
    const page = await t.web.get('/suppressions').expect(200);
    expect(page.text).toContain('2 addresses suppressed.');
    expect(page.text).toContain('Added by hand');
    const bad = await t.web.post('/suppressions', { email_address: '<b>nope</b>' }).expect(422);
    expect(bad.text).toContain('id="email_address-error"');
    expect(bad.text).not.toContain('<b>nope</b>');
  });
});
