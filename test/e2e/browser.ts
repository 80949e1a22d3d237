import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Browser, chromium, Page } from 'playwright-core';
import type { Harness, TestAccount } from '../support/harness';
import { until } from '../support/wait';

/**
 * Debian's Chromium, never a downloaded browser (`apt-get install chromium`; `npm test`'s
 * pretest step, scripts/find-chromium.sh, finds the same path or installs it). Headless, sandbox off (CI runs as root), and no network of its own.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, ...extraArgs], headless: true });
}

export interface BrowserOptions {
  /**
   * Serve the app to the browser as this origin (e.g. `http://host.example`, port 80 implied)
   * instead of 127.0.0.1: Chromium's `--host-resolver-rules` maps its host and port to the test
   * server, with no hosts file. Browsers treat 127.0.0.1 as a secure origin; a name is not.
   */
  origin?: string;
}

export interface BrowserHarness {
  browser: Browser;
  baseUrl: string;
  /** A fresh page (its own cookies) that records console errors and failed requests. */
  page(): Promise<Page>;
  /** What the browser complained about on the latest page: CSP violations, script errors, 5xx answers. */
  problems: string[];
  signIn(page: Page, account: TestAccount): Promise<void>;
  /** A fresh page, signed in as the account. */
  signedIn(account: TestAccount): Promise<Page>;
  /** A new account and a fresh page, not signed in yet: the opening of most journeys. */
  newcomer(): Promise<{ account: TestAccount; page: Page }>;
}

/** Serves the harness's app on 127.0.0.1, port 0, and opens one browser for the file. */
export function useBrowser(h: Harness, options: BrowserOptions = {}): BrowserHarness {
  let server: Server;
  const b = { problems: [] as string[] } as BrowserHarness;
  // A journey is many steps, each failing on its own after 20 s (below); the whole test gets
  // 90 s so a journey on a loaded machine (a PostgreSQL send beside the crash test) can finish.
  jest.setTimeout(90_000);

  beforeAll(async () => {
    server = await new Promise<Server>((resolve) => {
      const s = h.runtime.app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const port = (server.address() as AddressInfo).port;
    if (options.origin) {
      const url = new URL(options.origin);
      b.baseUrl = url.origin;
      b.browser = await launchChromium([`--host-resolver-rules=MAP ${url.hostname} 127.0.0.1:${port}`]);
    } else {
      b.baseUrl = `http://127.0.0.1:${port}`;
      b.browser = await launchChromium();
    }
  });

  afterAll(async () => {
    await b.browser?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  b.page = async () => {
    const context = await b.browser.newContext({ baseURL: b.baseUrl, viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    // Shorter than a journey's time limit (90 s), so a stuck step names itself; long enough for a
    // PostgreSQL save while other suites' browsers and worker processes hold both cores (a
    // segment save once took over 20 s there in CI).
    page.setDefaultTimeout(40_000);
    b.problems.length = 0;
    page.on('console', (message) => {
      // A refused form or sign-in answers 4xx on purpose; the browser logs each one.
      if (message.type() === 'error' && !/^Failed to load resource: .* status of 4\d\d/.test(message.text())) {
        b.problems.push(`console: ${message.text()}`);
      }
    });
    page.on('pageerror', (error) => b.problems.push(`page error: ${error.message}`));
    page.on('response', (response) => {
      if (response.status() >= 500) b.problems.push(`${response.status()} ${response.url()}`);
    });
    // Confirmation dialogs (hx-confirm) are accepted, as a user clicking OK would.
    page.on('dialog', (dialog) => void dialog.accept());
    return page;
  };

  b.newcomer = async () => ({ account: await h.account(), page: await b.page() });
  b.signedIn = async (account) => {
    const page = await b.page();
    await b.signIn(page, account);
    return page;
  };

  b.signIn = async (page, account) => {
    await page.goto('/login');
    await page.getByLabel('Email').fill(account.email);
    await page.getByLabel('Password').fill('correct horse battery staple');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${b.baseUrl}/`);
  };

  return b;
}

/**
 * Polls a condition from the test side (a string page.waitForFunction would be evaluated in
 * the page, which the dashboard's CSP forbids).
 */
export function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  return until(check, timeoutMs, what);
}

/**
 * Fills the composer's first fields as a marketer does: name, subject, preheader, and the sender
 * and unsubscribe group that `newsDesk` (test/support/fixtures.ts) makes.
 */
export async function fillComposer(page: Page, fields: { name: string; subject: string; preheader: string }): Promise<void> {
  await page.getByLabel('Name', { exact: true }).fill(fields.name);
  await page.getByLabel('Subject').fill(fields.subject);
  await page.getByLabel('Preheader').fill(fields.preheader);
  await page.getByLabel('Sender').selectOption({ label: 'News — news@acme.example' });
  await page.getByLabel('Unsubscribe group').selectOption({ label: 'Newsletter' });
}

/** How wide the page's content is and how wide its window: a page that does not scroll sideways has scroll ≤ inner. */
export function widths(page: Page): Promise<{ scroll: number; inner: number }> {
  return page.evaluate(() => {
    // The suite compiles without the DOM library.
    const w = globalThis as unknown as { document: { documentElement: { scrollWidth: number } }; innerWidth: number };
    return { scroll: w.document.documentElement.scrollWidth, inner: w.innerWidth };
  });
}
