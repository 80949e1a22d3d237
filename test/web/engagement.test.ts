import request from 'supertest';
import { addContactType, sendingFixtures, testWorker } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { signIn, useTwoAccounts } from '../support/web';

const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36';

describe('dashboard engagement of a send and an automation', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);
  const f = sendingFixtures(h);
  const sink = useSmtpSink();
  let sendUtr = '';
  let automationUtr = '';

  const click = (html: string, n: number) => {
    const href = [...html.matchAll(/href="(http:\/\/campaigns\.test\/c\/[^"]+)"/g)].map((m) => m[1]).find((u) => u.endsWith(`/${n}`))!;
    return request(h.runtime.app).get(new URL(href).pathname).set('User-Agent', CHROME).expect(302);
  };
  const pixel = (html: string, agent: string) =>
    request(h.runtime.app).get(new URL(/<img src="([^"]+\.gif)"/.exec(html)![1]).pathname).set('User-Agent', agent).expect(200);

  beforeAll(async () => {
    const userId = t.alice.user_id;
    const senderId = await f.sender(userId);
    const groupId = await f.group(userId);
    const type = await addContactType(h, t.alice, 'Customers');
    for (const [i, email] of ['ann@example.org', 'ben@example.org', 'cat@example.org', '=cmd@example.org'].entries()) {
      await f.contact(userId, type, email, { first_name: `P${i}` });
    }
    const html = '<html><body><a href="https://shop.example/sale">Sale</a> <a href="https://blog.example/news?a=1&amp;b=2">News</a></body></html>';
    const sendId = await f.singleSend(userId, { senderId, groupId, to: [{ contactType: type }], html });
    sendUtr = String((await f.send(sendId)).utr);
    const automationId = await f.automation(userId, { type: 'custom', contactType: type, groupId, status: 1 });
    automationUtr = String((await f.automationRecord(automationId)).utr);
    await f.schedule(userId, automationId, { senderId, subject: 'Welcome', waitingPeriod: 1, waitingType: 'instantly', html: '<html><body><a href="https://shop.example/start">Start</a></body></html>' });
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);

    const mail = (to: string, subject: string) => String(sink.messages.find((m) => m.to[0] === to && m.parsed.subject === subject)!.parsed.html);
    const news = (to: string) => mail(to, 'Hello ' + { 'ann@example.org': 'P0', 'ben@example.org': 'P1', 'cat@example.org': 'P2', '=cmd@example.org': 'P3' }[to]);
    await click(news('ann@example.org'), 1);
    await click(news('ann@example.org'), 1);
    await click(news('ann@example.org'), 2);
    await click(news('ben@example.org'), 1);
    await pixel(news('cat@example.org'), 'Mozilla/5.0');
    await pixel(news('=cmd@example.org'), CHROME);
    await click(mail('ann@example.org', 'Welcome'), 1);
  });

  test('when a sent send is shown then its rates of delivered, its links with unique and total clicks, and its clicks over time are on the page', async () => {
    const page = (await t.web.get(`/single-sends/${sendUtr}`).expect(200)).text;
    // 4 delivered; 4 opened (2 through a click), 3 of them by people; 2 clicked, 4 clicks.
    expect(page).toMatch(/<p class="stat-label">Open rate<\/p><p class="stat-value">100\.0%<\/p><p class="stat-note">4 unique opens, 4 in all<\/p>/);
    expect(page).toMatch(/<p class="stat-label">Opens \(excluding automated\)<\/p><p class="stat-value">75\.0%<\/p>/);
    expect(page).toMatch(/<p class="stat-label">Click rate<\/p><p class="stat-value">50\.0%<\/p><p class="stat-note">2 people clicked, 4 clicks in all<\/p>/);
    expect(page).toMatch(/<p class="stat-label">Unsubscribe rate<\/p><p class="stat-value">0\.0%<\/p>/);
    expect(page).toMatch(/<p class="stat-label">Bounce rate<\/p><p class="stat-value">0\.0%<\/p>/);
    expect(page).toContain('<td class="url"><a href="https://shop.example/sale" rel="noopener noreferrer" target="_blank">https://shop.example/sale</a></td><td class="num">2</td><td class="num">3</td>');
    expect(page).toContain('<td class="url"><a href="https://blog.example/news?a=1&amp;b=2" rel="noopener noreferrer" target="_blank">https://blog.example/news?a=1&amp;b=2</a></td><td class="num">1</td><td class="num">1</td>');
    expect(page).toContain('aria-label="Unique clicks per hour"');
    expect(page).toContain(`href="/single-sends/${sendUtr}/people?kind=clicked"`);
  });

  test('when who opened or clicked is asked for then a page lists them, automated opens marked, and the CSV has every one', async () => {
    const opened = (await t.web.get(`/single-sends/${sendUtr}/people?kind=opened`).expect(200)).text;
    for (const email of ['ann@example.org', 'ben@example.org', 'cat@example.org', '=cmd@example.org']) expect(opened).toContain(`<td>${email}</td>`);
    expect((opened.match(/<span class="badge warn">automated<\/span>/g) ?? []).length).toBe(1);
    expect(opened).toContain('1–4 of 4');
    const clicked = (await t.web.get(`/single-sends/${sendUtr}/people?kind=clicked`).expect(200)).text;
    expect(clicked).toContain('<td>ann@example.org</td>');
    expect(clicked).not.toContain('<td>cat@example.org</td>');
    expect(clicked).toContain('1–2 of 2');

    const csv = await t.web.get(`/single-sends/${sendUtr}/people.csv?kind=clicked`).expect(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toBe(`attachment; filename=clicked-${sendUtr}.csv`);
    const lines = csv.text.trim().split('\r\n');
    expect(lines[0]).toBe('email,opened_at,automated_only,clicked_at,clicks');
    expect(lines.slice(1).map((l) => [l.split(',')[0], l.split(',')[2], l.split(',')[4]]).sort()).toEqual([
      ['ann@example.org', 'no', '3'],
      ['ben@example.org', 'no', '1'],
    ]);
    const everyone = (await t.web.get(`/single-sends/${sendUtr}/people.csv?kind=opened`).expect(200)).text;
    // A cell that a spreadsheet would run as a formula is quoted and prefixed.
    expect(everyone).toContain(`"'=cmd@example.org"`);
    expect(everyone.trim().split('\r\n')).toHaveLength(5);
  });

  test('when an automation is shown then its rates and its steps’ links are on the page', async () => {
    const page = (await t.web.get(`/automations/${automationUtr}`).expect(200)).text;
    expect(page).toMatch(/<p class="stat-label">Click rate<\/p><p class="stat-value">25\.0%<\/p><p class="stat-note">1 person clicked, 1 click in all<\/p>/);
    expect(page).toContain('<td class="url"><a href="https://shop.example/start" rel="noopener noreferrer" target="_blank">https://shop.example/start</a></td><td class="num">1</td><td class="num">1</td>');
    expect(page).toContain('aria-label="Unique opens per hour"');
    const people = (await t.web.get(`/automations/${automationUtr}/people?kind=clicked`).expect(200)).text;
    expect(people).toContain('<td>ann@example.org</td>');
  });

  test('when another account asks for the people or the CSV then it is not found', async () => {
    const bob = await signIn(h, t.bob);
    await bob.get(`/single-sends/${sendUtr}/people?kind=opened`).expect(404);
    await bob.get(`/single-sends/${sendUtr}/people.csv?kind=opened`).expect(404);
    await bob.get(`/automations/${automationUtr}/people.csv?kind=clicked`).expect(404);
  });
});
