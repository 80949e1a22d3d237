import http from 'node:http';
import net from 'node:net';
import { emailKey } from '../../src/lib/email-key';
import { addContactType, countryId } from '../support/fixtures';
import { TestAccount, useHarness } from '../support/harness';
import { ServiceProcess, until, useServiceProcesses } from '../support/processes';

const CLIENTS = 20;
const STOPS = 2;
/** Contacts added between one start and the next stop, so that every stop meets a steady load. */
const PER_RUN = 100;
/**
 * Clients whose request the server holds when it is told to stop: sent with `Expect:
 * 100-continue`, the body follows only once the process has stopped accepting. Without them
 * the stop could find every request answered already (on SQLite a request is handled in one
 * turn of the event loop), and would not show what becomes of a request in hand.
 */
const HOLDERS = 5;

type Outcome =
  | { kind: 'answered'; status: number; body: string }
  /** Nobody listens (the process has stopped): the request never reached a server. */
  | { kind: 'refused' }
  /**
   * The connection broke before the answer was complete; `reused`: the request went out on a
   * kept-alive connection that had carried an earlier answer.
   */
  | { kind: 'broken'; error: string; reused: boolean };

/**
 * One POST over the client's keep-alive agent; never rejects. With `hold`, it asks for a
 * `100 Continue` and sends the body only when `hold` resolves (it is called once the server
 * has the request).
 */
function addContact(agent: http.Agent, port: number, account: TestAccount, payload: string, hold?: () => Promise<void>): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/api/v1/contacts/add',
        method: 'POST',
        agent,
        headers: {
          ...account.headers,
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(payload),
          ...(hold ? { Expect: '100-continue' } : {}),
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ kind: 'answered', status: res.statusCode ?? 0, body }));
        res.on('aborted', () => resolve({ kind: 'broken', error: 'answer cut off', reused: req.reusedSocket }));
        res.on('error', (err: NodeJS.ErrnoException) => resolve({ kind: 'broken', error: err.code ?? err.message, reused: req.reusedSocket }));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED' ? { kind: 'refused' } : { kind: 'broken', error: err.code ?? err.message, reused: req.reusedSocket }));
    if (!hold) return void req.end(payload);
    req.once('continue', () => void hold().then(() => req.end(payload)));
    req.flushHeaders();
  });
}

/** Whether a new connection to the port is refused (the process has stopped accepting). */
function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

describe('a web process stopped with SIGTERM under keep-alive load', () => {
  const h = useHarness();
  const processes = useServiceProcesses(h, 'stop');

  async function startWeb(): Promise<{ process: ServiceProcess; port: number }> {
    const web = processes.start(['--role=web'], { HOST: '127.0.0.1', PORT: '0', API_RATE_LIMIT: '0' });
    const listening = /listening on http:\/\/127\.0\.0\.1:(\d+)/;
    await until(() => listening.test(web.output()) || web.child.exitCode !== null, 60_000, 'the web process to listen');
    const port = listening.exec(web.output())?.[1];
    if (!port) throw new Error(`the web process did not start:\n${web.output()}`);
    return { process: web, port: Number(port) };
  }

  test(`when it is stopped and started ${STOPS} times while ${CLIENTS} keep-alive clients add contacts then it exits 0 each time, every contact answered 2xx exists, and no request sent on a kept-alive connection is reset`, async () => {
    const alice = await h.account();
    const type = await addContactType(h, alice, 'Load');
    const country = await countryId(h, 'FR');

    let web = await startWeb();
    /** The port of the process taking requests; pending while none is (between a stop and the next start). */
    let current: Promise<number> = Promise.resolve(web.port);
    let done = false;
    const added: string[] = [];
    /** Addresses whose request broke: the server may have read it, but must not have handled it. */
    const broken: { email: string; error: string; reused: boolean }[] = [];
    const otherAnswers: { email: string; status: number; body: string }[] = [];
    const unexpected: string[] = [];
    /** Open while a stop is being prepared: the first HOLDERS clients to come by hold a request. */
    let gate: { taken: number; held: string[]; release: Promise<void> } | undefined;

    // A client keeps to the process it reached until a request is refused or broken; then it
    // waits for the next start.
    const client = async (n: number) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      let target = current;
      let port = await target;
      for (let seq = 0; !done; seq += 1) {
        // Each attempt a new address: a retry never meets its own earlier attempt.
        const email = `c${n}.${seq}@load.test`;
        const payload = JSON.stringify({ contact_type_id: type, email, country });
        const holding = gate && gate.taken < HOLDERS ? gate : undefined;
        if (holding) holding.taken += 1;
        const hold = holding && (() => (holding.held.push(email), holding.release));
        const outcome = await addContact(agent, port, alice, payload, hold);
        if (outcome.kind === 'answered' && outcome.status >= 200 && outcome.status < 300) added.push(email);
        else if (outcome.kind === 'answered') otherAnswers.push({ email, status: outcome.status, body: outcome.body });
        else if (outcome.kind === 'broken') broken.push({ email, error: outcome.error, reused: outcome.reused });
        if (outcome.kind === 'answered') continue;
        // A broken request may be a new connection still waiting to be accepted as the process
        // stopped listening (checked below: the server never handled it); refused, the process
        // must have stopped.
        if (outcome.kind === 'refused' && current === target) unexpected.push(`${email}: refused while the process ran`);
        target = current;
        port = await target;
      }
      agent.destroy();
    };
    const clients = Array.from({ length: CLIENTS }, (_, n) => client(n));

    const failing = () => otherAnswers.length + unexpected.length > 0 || web.process.child.exitCode !== null;
    /** Until PER_RUN more contacts are added, or something went wrong that ends the test. */
    const load = async (what: string) => {
      const threshold = added.length + PER_RUN;
      await until(() => added.length >= threshold || failing(), 120_000, what);
    };
    const exits: (number | string)[] = [];
    const held: string[] = [];
    // Set while clients wait on them; called again at the end so that no client waits forever.
    let release = () => {};
    let started = (_port: number) => {};
    try {
      for (let stop = 1; stop <= STOPS; stop += 1) {
        await load(`stop ${stop}: ${PER_RUN} contacts added`);
        gate = { taken: 0, held: [], release: new Promise((resolve) => (release = resolve)) };
        const { held: holding } = gate;
        await until(() => holding.length === HOLDERS || failing(), 60_000, `stop ${stop}: ${HOLDERS} requests held`);
        gate = undefined;
        held.push(...holding);
        current = new Promise((resolve) => (started = resolve));
        web.process.child.kill('SIGTERM');
        await until(() => refuses(web.port), 60_000, `stop ${stop}: the process to stop accepting`);
        release();
        exits.push(await web.process.exited);
        web = await startWeb();
        started(web.port);
      }
      await load(`${PER_RUN} contacts added after the last start`);
    } finally {
      done = true;
      gate = undefined;
      release();
      started(web.port);
      await Promise.all(clients);
    }
    web.process.child.kill('SIGTERM');
    exits.push(await web.process.exited);

    const stored = new Set<string>(await h.runtime.db('contacts').where({ user_id: alice.user_id }).pluck('email_key'));
    expect({
      exits,
      otherAnswers,
      unexpected,
      heldNotAdded: held.filter((email) => !added.includes(email)),
      addedNotStored: added.filter((email) => !stored.has(emailKey(email))),
      // No kept-alive connection is cut under its client: every request sent on one is answered.
      brokenOnKeptAliveConnection: broken.filter((b) => b.reused),
      // A new connection the kernel had queued but the process never accepted is reset when it
      // stops listening (like a refused one, it was never read): the request must not have been handled.
      brokenButHandled: broken.filter(({ email }) => stored.has(emailKey(email))),
    }).toEqual({ exits: Array(STOPS + 1).fill(0), otherAnswers: [], unexpected: [], heldNotAdded: [], addedNotStored: [], brokenOnKeptAliveConnection: [], brokenButHandled: [] });
    expect(stored.size).toBe(added.length);
  }, 300_000);
});
