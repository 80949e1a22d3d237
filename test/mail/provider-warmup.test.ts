import { MESSAGE_STATE } from '../../src/lib/constants';
import { useProviderWorld } from '../support/providers';
import { signIn } from '../support/web';

/** Warm-up caps per provider: the rest of a day's mail waits for the next day, not attempted. */
describe('a sending domain\'s warm-up', () => {
  const { sink, h, f, alice, clock, run } = useProviderWorld({
    env: { SEND_MAX_ATTEMPTS: '1' },
    // Late on a UTC day, so the next day is a few hours ahead of the clock.
    start: new Date(`${new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)}T20:00:00.000Z`),
  });

  test('when a domain warms up at 2 then 10 a day then each provider gets 2 today, the rest waits for tomorrow and goes then, never failed', async () => {
    const domain = (await h.api(alice).post('/domains/save').send({ domain: 'acme.test' }).expect(200)).body.message.domain;
    const updated = (await h.api(alice).post(`/domains/update?id=${domain.id}`).send({ warmup: [2, 10] }).expect(200)).body.message.domain;
    expect(updated).toMatchObject({ warmup: [2, 10], warmup_started_at: expect.any(String) });
    // The schedule starts on the day it was set: the test's clock is a day ahead of the wall clock.
    await h.runtime.db('sending_domains').where({ id: domain.id }).update({ warmup_started_at: clock.now().toISOString() });

    const { sender, group, type } = await f.basics(alice, 'Everyone');
    const gmail = ['g1', 'g2', 'g3', 'g4', 'g5'].map((n) => `${n}@gmail-like.test`);
    const outlook = ['o1', 'o2', 'o3'].map((n) => `${n}@outlook-like.test`);
    for (const email of [...gmail, ...outlook]) await f.contact(alice.user_id, type, email);
    const send = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }], dueAt: clock.now() });

    await run();
    const delivered = () => sink.messages.flatMap((m) => m.to);
    expect(delivered().filter((to) => to.endsWith('@gmail-like.test'))).toHaveLength(2);
    expect(delivered().filter((to) => to.endsWith('@outlook-like.test'))).toHaveLength(2);
    const waiting = (await f.ledger(send)).filter((r) => r.state === MESSAGE_STATE.queued);
    expect(waiting).toHaveLength(4);
    // Not attempts: with SEND_MAX_ATTEMPTS=1 a counted attempt would have failed them.
    expect(waiting.map((r) => Number(r.attempts))).toEqual([0, 0, 0, 0]);
    const tomorrow = `${new Date(clock.now().getTime() + 86_400_000).toISOString().slice(0, 10)}T00:00:00.000Z`;
    expect(waiting.every((r) => new Date(String(r.available_at)).toISOString() === tomorrow)).toBe(true);

    // What each provider took of the day's cap; the domain's page shows the cap and use per provider (of the wall clock's day).
    const usage = await h.runtime.db('warmup_usage').where({ sending_domain_id: domain.id }).orderBy('provider').select('provider', 'day', 'used');
    expect(usage).toEqual([{ provider: 'google', day: clock.now().toISOString().slice(0, 10), used: 2 }, { provider: 'microsoft', day: clock.now().toISOString().slice(0, 10), used: 2 }]);
    const web = await signIn(h, alice);
    const page = (await web.get(`/domains/${domain.id}`).expect(200)).text;
    expect(page).toContain('Warm-up today');
    expect(page).toMatch(/<th scope="row">Gmail<\/th><td>\d+<\/td><td>2<\/td>/);

    // Later today nothing more goes; tomorrow the cap is 10.
    clock.advance(60 * 60_000);
    await run();
    expect(delivered()).toHaveLength(4);
    clock.advance(4 * 60 * 60_000);
    await run();
    expect((await f.ledger(send)).map((r) => r.state)).toEqual([...gmail, ...outlook].map(() => MESSAGE_STATE.sent));
    expect(await f.send(send)).toMatchObject({ delivered: 8, failed: 0 });
  });

  test('when the warm-up is set wrong then it is a 422, and null ends it', async () => {
    const domain = (await h.api(alice).post('/domains/save').send({ domain: 'other.acme.test' }).expect(200)).body.message.domain;
    for (const warmup of [[], [0], [1.5], 'soon', Array.from({ length: 61 }, () => 1)]) {
      const res = await h.api(alice).post(`/domains/update?id=${domain.id}`).send({ warmup }).expect(422);
      expect(res.body.errors.warmup[0]).toMatch(/^The warmup must be null or a list of 1 to 60 daily caps/);
    }
    await h.api(alice).post(`/domains/update?id=${domain.id}`).send({ warmup: [1000, 1500] }).expect(200);
    expect((await h.api(alice).post(`/domains/update?id=${domain.id}`).send({ warmup: null }).expect(200)).body.message.domain).toMatchObject({ warmup: null, warmup_started_at: null });
    const bob = await h.account();
    expect((await h.api(bob).post(`/domains/update?id=${domain.id}`).send({ warmup: null }).expect(404)).body).toEqual({ status: 'failed', errors: 'Record Not Found' });
  });
});
