import { useHarness } from '../support/harness';
import { axeViolations } from './axe';
import { useBrowser, widths } from './browser';

/** Swagger UI's bundle (1.5 MB) takes seconds to parse on a machine shared with other test runs. */
const DOCS_TIMEOUT_MS = 120_000;
const RENDER_TIMEOUT_MS = 60_000;

describe('API reference page in Chromium', () => {
  const h = useHarness();
  const b = useBrowser(h);

  test('when /docs is opened then the routes of the document show, an operation opens, and nothing leaves 127.0.0.1 or breaks the CSP', async () => {
    const page = await b.page();
    const requests: string[] = [];
    page.on('request', (req) => requests.push(req.url()));

    const res = await page.goto('/docs');
    expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
    // The first render waits for the bundle to be parsed, which takes long on a loaded machine.
    await page.getByRole('heading', { name: 'Email Campaign Management API' }).waitFor({ timeout: RENDER_TIMEOUT_MS });
    await page.getByText('/contacts-type/add', { exact: true }).waitFor();
    await page.getByText('/single/send/create', { exact: true }).waitFor();
    await page.getByText('/openapi.json', { exact: true }).waitFor();

    // An operation opens with the keyboard and shows its parameter, taken from its validator.
    const operation = page.locator('.opblock-summary-control', { hasText: '/contacts-type/view' });
    await operation.focus();
    await page.keyboard.press('Enter');
    const parameter = page.locator('.parameters .parameter__name', { hasText: 'contact_type_id' });
    await parameter.waitFor();
    expect(await parameter.innerText()).toMatch(/^contact_type_id\s*\*/);

    // Swagger UI's "Authorize" offers the two key headers.
    await page.getByRole('button', { name: /Authorize/ }).first().click();
    const dialog = page.locator('.dialog-ux');
    await dialog.getByText('SecretKey', { exact: false }).first().waitFor();
    const text = await dialog.innerText();
    expect(text).toContain('PublicKey');
    expect(text).toMatch(/In:\s*header/);

    const elsewhere = requests.filter((url) => !url.startsWith(`${b.baseUrl}/`) && !url.startsWith('data:'));
    expect(elsewhere).toEqual([]);
    expect(requests).toContain(`${b.baseUrl}/api/v1/openapi.json`);
    expect(b.problems).toEqual([]);
  }, DOCS_TIMEOUT_MS);

  test('when /docs is opened 390 px wide then it does not scroll sideways', async () => {
    const page = await b.page();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto('/docs');
    await page.getByText('/contacts-type/add', { exact: true }).waitFor({ timeout: RENDER_TIMEOUT_MS });
    const { scroll, inner } = await widths(page);
    expect(scroll).toBeLessThanOrEqual(inner);
    expect(b.problems).toEqual([]);
  }, DOCS_TIMEOUT_MS);

  test('when /docs is checked with axe, also with an operation open and tried out, then no rule fails and "Try it out" calls the API', async () => {
    const page = await b.page();
    await page.goto('/docs');
    await page.getByText('/contacts-type/add', { exact: true }).waitFor({ timeout: RENDER_TIMEOUT_MS });
    const found = await axeViolations(page);

    const operation = page.locator('.opblock-summary-control', { hasText: '/contacts-type/view' });
    await operation.click();
    await page.getByRole('button', { name: 'Try it out' }).click();
    await page.getByPlaceholder('contact_type_id').fill('1');
    await page.getByRole('button', { name: 'Execute' }).click();
    // Without a key the service answers 401 in its envelope: the call went out and came back.
    await page.locator('.live-responses-table .response-col_status', { hasText: '401' }).waitFor();
    found.push(...(await axeViolations(page)));
    expect(found).toEqual([]);
    expect(b.problems).toEqual([]);
  }, DOCS_TIMEOUT_MS);
});
