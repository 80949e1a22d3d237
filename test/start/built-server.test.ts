import { execFileSync } from 'node:child_process';
import { SINGLE_SEND_STATUS } from '../../src/lib/constants';
import { PROJECT_ROOT } from '../../src/lib/paths';
import { useHarness } from '../support/harness';
import { sendingFixtures } from '../support/fixtures';
import { ServiceProcess, until, useServiceProcesses } from '../support/processes';
import { startSmtpSink, SmtpSink } from '../support/smtp';

/**
 * What `npm start` runs: the build (`npm run build`, plain tsc) started as `node dist/src/server.js`.
 * It must serve the API, the dashboard with its files, the API docs, and send mail.
 */
describe('the built server that npm start runs', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  let sink: SmtpSink;
  const processes = useServiceProcesses(h, 'built');

  beforeAll(async () => {
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: PROJECT_ROOT, stdio: 'pipe', timeout: 180_000 });
    sink = await startSmtpSink();
  }, 200_000);
  afterAll(() => sink?.close());

  async function start(): Promise<{ process: ServiceProcess; base: string }> {
    const started = processes.start([], { HOST: '127.0.0.1', PORT: '0', SMTP_URL: sink.url }, true);
    await until(() => /listening on http:\/\/127\.0\.0\.1:\d+/.test(started.output()), 30_000, 'the built server to listen');
    const port = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(started.output())![1];
    return { process: started, base: `http://127.0.0.1:${port}` };
  }

  async function stop(started: ServiceProcess): Promise<void> {
    started.child.kill('SIGTERM');
    expect(await started.exited).toBe(0);
  }

  test('when started as npm start runs it then it serves the API, the dashboard, its files and the API docs, and sends a campaign', async () => {
    const alice = await h.account();

    const first = await start();
    const types = await fetch(`${first.base}/api/v1/contacts-type`, { headers: alice.headers });
    expect(types.status).toBe(200);
    expect(await types.json()).toEqual({ status: 'success', message: { contactTypes: [] } });
    const unkeyed = await fetch(`${first.base}/api/v1/contacts-type`);
    expect(unkeyed.status).toBe(401);

    const signIn = await fetch(`${first.base}/login`);
    expect(signIn.status).toBe(200);
    const page = await signIn.text();
    expect(page).toMatch(/<form[^>]+method="post"/i);
    // The page's script and stylesheet come from node_modules and public/, by path at run time.
    const assets = [...page.matchAll(/(?:src|href)="(\/[^"]+\.(?:js|css)(?:\?[^"]*)?)"/g)].map((m) => m[1]);
    expect(assets).toEqual(expect.arrayContaining([expect.stringMatching(/^\/vendor\/htmx-/), expect.stringMatching(/^\/assets\/app\.css/)]));
    for (const asset of assets) expect([asset, (await fetch(`${first.base}${asset}`)).status]).toEqual([asset, 200]);

    const docs = await fetch(`${first.base}/docs`);
    expect(docs.status).toBe(200);
    const docsAssets = [...(await docs.text()).matchAll(/(?:src|href)="(\/vendor\/[^"]+)"/g)].map((m) => m[1]);
    expect(docsAssets.length).toBeGreaterThan(0);
    for (const asset of docsAssets) expect([asset, (await fetch(`${first.base}${asset}`)).status]).toEqual([asset, 200]);
    const openapi = await fetch(`${first.base}/api/v1/openapi.json`);
    expect(((await openapi.json()) as { openapi: string }).openapi).toBe('3.1.0');

    const { sender, group, type } = await f.basics(alice, 'Readers');
    await f.contacts(alice.user_id, type, 3);
    const sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });
    await sink.waitFor(3, 30_000);
    await until(async () => (await f.send(sendId)).status === SINGLE_SEND_STATUS.completed, 30_000, 'the send to complete');
    expect(sink.messages.map((m) => m.to).sort()).toEqual(['r0@bulk.test', 'r1@bulk.test', 'r2@bulk.test'].map((a) => [a]));
    await stop(first.process);
  }, 150_000);
});
