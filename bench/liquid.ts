/**
 * Heavy Liquid never holds the event loop: five dashboard previews of the worst template (four
 * nested loops of 60) run at once while a monitor asks `/healthz` again and again; prints the
 * slowest and the median answer of the monitor beside the target (≤200 ms), and the same
 * monitor's answers with no preview running (the machine's own floor, measured in the same run).
 * Run: `npm run bench:liquid` (BENCH_DB=sqlite or postgres for one of them; BENCH_ROUNDS, default 5).
 */
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { boot } from '../src/boot';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/logger';
import { DbKind, freshDb, machineLine } from './lib/server';
import { beside, TARGETS } from './lib/targets';

const KINDS = (process.env.BENCH_DB ?? 'sqlite,postgres').split(',') as DbKind[];
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const PASSWORD = 'bench bench bench';
const WORST =
  `{% assign s = "${Array(60).fill('x').join(',')}" | split: "," %}` +
  '{% for a in s %}{% for b in s %}{% for c in s %}{% for d in s %}<p>{{ a }}{{ b }}{{ c }}{{ d }}</p>{% endfor %}{% endfor %}{% endfor %}{% endfor %}';

const csrfOf = (html: string) => /<meta name="csrf-token" content="([^"]+)"/.exec(html)?.[1] ?? '';
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Asks /healthz until `busy(answers so far)` says stop; answers how long each answer took, in ms. */
async function monitor(base: string, busy: (answered: number) => boolean): Promise<number[]> {
  const waits: number[] = [];
  do {
    const asked = performance.now();
    const res = await fetch(`${base}/healthz`);
    await res.arrayBuffer();
    waits.push(performance.now() - asked);
  } while (busy(waits.length));
  return waits;
}

async function benchOne(kind: DbKind): Promise<void> {
  const db = await freshDb(kind, 'liquid');
  const runtime = await boot(loadConfig({ ...db.env, DATA_DIR: db.dir, LOG_LEVEL: 'silent', BASE_URL: 'http://127.0.0.1' }), createLogger('silent'));
  const server = runtime.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const { services } = runtime;
    const account = await services.accounts.create({ email: 'bench@example.com', password: PASSWORD });
    const keys = { PublicKey: account.public_key, SecretKey: account.secret_key };
    const api = (path: string, body: Record<string, unknown>) => request(base).post(`/api/v1${path}`).set(keys).send(body);

    const country = await runtime.db('countries').where({ iso2: 'DE' }).first('id');
    const state = await runtime.db('states').where({ country_id: country.id, iso2: 'BE' }).first('id');
    const city = await runtime.db('cities').where({ state_id: state.id }).orderBy('id').first('id');
    await api('/sender/save', {
      from_name: 'News', from_email: 'news@example.com', reply_to_email: 'news@example.com', nickname: 'news',
      country_id: country.id, state_id: state.id, city_id: city.id, zip_code: '10115', company_address: 'Unter den Linden 1',
    }).expect(200);
    const senderId = Number((await runtime.db('senders').where({ user_id: account.user_id }).update({ is_verified: 1, verify_token_hash: null }).returning('id'))[0].id);
    await api('/unsubscribes-groups/save', { group_name: 'News', description: 'd', is_display: 1 }).expect(200);
    const group = await runtime.db('unsubscribe_groups').where({ user_id: account.user_id }).first('id');
    const type = await services.contactTypes.add({ userId: account.user_id }, { name: 'Bench' });
    const created = await api('/single/send/create', {
      template_id: 1, sender_id: senderId, unsubscribe_group_id: group.id, single_send_name: 'Heavy',
      subject: `Hi ${WORST}`, preheader: 'p', template_html: `<html><body>${WORST}</body></html>`,
      recipient_id: [`contacts_${type}`], schedule_type: 1, schedule_date: '2099-01-01', schedule_time: '09:00',
    }).expect(200);
    const utr = created.body.message.utr as string;

    const web = request.agent(base);
    const login = await web.get('/login').expect(200);
    await web.post('/login').type('form').send({ _csrf: csrfOf(login.text), email: 'bench@example.com', password: PASSWORD }).expect(303);
    const preview = () => web.get(`/single-sends/${utr}/preview`).then((res) => res.status);
    await preview();

    const idle: number[] = [];
    const loaded: number[] = [];
    for (let i = 0; i < ROUNDS; i += 1) {
      idle.push(...(await monitor(base, (answered) => answered < 20)));
      let previewing = true;
      const previews = Promise.all(Array.from({ length: 5 }, preview)).finally(() => {
        previewing = false;
      });
      loaded.push(...(await monitor(base, () => previewing)));
      const statuses = await previews;
      if (statuses.some((s) => s !== 422)) throw new Error(`a preview of the worst template answered ${statuses.join(', ')}, not 422`);
    }
    console.log(`${kind}: /healthz during five previews of the worst template, ${loaded.length} answers: median ${median(loaded).toFixed(1)} ms, slowest ${Math.max(...loaded).toFixed(1)} ms`);
    console.log(`${kind}: /healthz with nothing else running, ${idle.length} answers: median ${median(idle).toFixed(1)} ms, slowest ${Math.max(...idle).toFixed(1)} ms`);
    console.log(`${kind}: ${beside(TARGETS.healthzUnderPreviews, Math.max(...loaded))}`);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await runtime.close();
    await db.drop();
  }
}

async function main(): Promise<void> {
  console.log(machineLine());
  for (const kind of KINDS) await benchOne(kind);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
