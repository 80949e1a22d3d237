import request from 'supertest';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { addMember, linkToken, signInMember } from '../support/team';
import { metaCsrf, PASSWORD, setCookie, signIn, WebClient } from '../support/web';

describe('team pages', () => {
  const sink = useSmtpSink();
  const h = useHarness({ SMTP_URL: () => sink.url });

  const [owner] = h.accounts(1);
  let web: WebClient;

  beforeAll(async () => {
    web = await signIn(h, owner);
  });

  /** A fresh browser: opens a public page and posts its form with the page's token. */
  async function publicForm(path: string, form: Record<string, string>) {
    const agent = request.agent(h.runtime.app);
    const page = await agent.get(path);
    if (page.status !== 200) return { agent, res: page };
    const res = await agent.post(path).type('form').send({ _csrf: metaCsrf(page.text), ...form });
    return { agent, res };
  }

  test('when the owner invites from the Team page then the person is listed as invited, accepts on the link page and lands signed in', async () => {
    await web.post('/team', { email: 'ivy@team.example', name: 'Ivy', role: 'editor' }).expect(303);
    const team = await web.get('/team').expect(200);
    expect(team.text).toContain('Invitation sent to ivy@team.example.');
    expect(team.text).toMatch(/Ivy[\s\S]*ivy@team\.example[\s\S]*Invited/);

    const token = await linkToken(sink, 'ivy@team.example', 'invitation');
    const agent = request.agent(h.runtime.app);
    const page = await agent.get(`/invitation/${token}`).expect(200);
    expect(page.text).toContain('You are invited as editor with the address ivy@team.example.');
    const short = await agent.post(`/invitation/${token}`).type('form').send({ _csrf: metaCsrf(page.text), name: 'Ivy', password: 'short', password_confirmation: 'short' }).expect(422);
    expect(short.text).toContain('The password must be at least 10 characters.');
    const res = await agent.post(`/invitation/${token}`).type('form').send({ _csrf: metaCsrf(page.text), name: 'Ivy Green', password: PASSWORD, password_confirmation: PASSWORD }).expect(303);
    expect(res.headers.location).toBe('/');
    expect(setCookie(res, 'cc_session')).toBeDefined();
    const home = await agent.get('/').expect(200);
    expect(home.text).toContain('Welcome, Ivy Green. You are signed in.');
    expect(home.text).not.toContain('href="/team"');
    await agent.get('/team').expect(403);

    // The link is spent.
    await request(h.runtime.app).get(`/invitation/${token}`).expect(410);
  });

  test('when an invitation link is unknown then the page says it does not work any more', async () => {
    const res = await request(h.runtime.app).get('/invitation/not-a-token').expect(410);
    expect(res.text).toContain('This link does not work any more');
  });

  test('when the owner changes a role, disables, resends and removes on the Team page then each takes effect', async () => {
    const jo = await addMember(h, sink, owner, 'analyst', 'jo@team.example');
    const jos = await signInMember(h, owner, jo.email);
    await jos.get('/contacts').expect(200);
    await web.post(`/team/${jo.id}/role`, { role: 'editor' }).expect(303);
    expect((await h.runtime.services.teamUsers.member(jo.id))?.role).toBe('editor');
    await web.post(`/team/${jo.id}/status`, { status: 'disabled' }).expect(303);
    await jos.get('/contacts').expect(303);
    await web.post(`/team/${jo.id}/status`, { status: 'active' }).expect(303);
    await web.post(`/team/${jo.id}/delete`).expect(303);
    expect(await h.runtime.services.teamUsers.member(jo.id)).toBeUndefined();

    await web.post('/team', { email: 'kim@team.example', role: 'analyst' }).expect(303);
    const first = await linkToken(sink, 'kim@team.example', 'invitation');
    const kim = (await h.runtime.db('team_users').where({ email: 'kim@team.example' }).first()).id;
    await web.post(`/team/${kim}/resend`).expect(303);
    const second = await linkToken(sink, 'kim@team.example', 'invitation');
    expect(second).not.toBe(first);
    await request(h.runtime.app).get(`/invitation/${first}`).expect(410);
    await request(h.runtime.app).get(`/invitation/${second}`).expect(200);
  });

  test('when a person forgets their password then a mailed link sets a new one once and signs every browser out', async () => {
    const lee = await addMember(h, sink, owner, 'editor', 'lee@team.example');
    const before = await signInMember(h, owner, lee.email);
    const asked = await publicForm('/forgot-password', { email: 'LEE@team.example' });
    expect(asked.res.status).toBe(200);
    expect(asked.res.text).toContain('If this address signs in here, a link to choose a new password is on its way.');
    const unknown = await publicForm('/forgot-password', { email: 'nobody@team.example' });
    expect(unknown.res.text).toContain('If this address signs in here, a link to choose a new password is on its way.');

    const token = await linkToken(sink, lee.email, 'reset-password');
    const { res } = await publicForm(`/reset-password/${token}`, { password: 'a brand new secret', password_confirmation: 'a brand new secret' });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/login');
    await before.get('/contacts').expect(303);
    expect(await h.runtime.services.teamUsers.signIn(lee.email, PASSWORD)).toBeUndefined();
    expect(await h.runtime.services.teamUsers.signIn(lee.email, 'a brand new secret')).toMatchObject({ id: lee.id });
    await request(h.runtime.app).get(`/reset-password/${token}`).expect(410);
  });

  test('when a person looks at their sessions then they see each browser, can end another, and can sign out everywhere', async () => {
    const mo = await addMember(h, sink, owner, 'analyst', 'mo@team.example');
    const phone = await signInMember(h, owner, mo.email);
    const laptop = await signInMember(h, owner, mo.email);
    const page = await laptop.get('/profile').expect(200);
    expect(page.text).toContain('This browser');
    const ends = [...page.text.matchAll(/action="\/profile\/sessions\/([0-9a-f]+)\/end"/g)].map((m) => m[1]);
    expect(ends).toHaveLength(1);
    await laptop.post(`/profile/sessions/${ends[0]}/end`).expect(303);
    await phone.get('/contacts').expect(303);
    await laptop.get('/contacts').expect(200);
    // Another person's session handle ends nothing.
    await web.post(`/profile/sessions/${ends[0]}/end`).expect(303);
    await laptop.post('/profile/sign-out-everywhere').expect(303);
    await laptop.get('/contacts').expect(303);
  });

  test('when a person changes their password on their profile then other browsers are signed out', async () => {
    const ned = await addMember(h, sink, owner, 'editor', 'ned@team.example');
    const one = await signInMember(h, owner, ned.email);
    const two = await signInMember(h, owner, ned.email);
    const wrong = await one.post('/profile/password', { current_password: 'nope', password: 'a longer secret!', password_confirmation: 'a longer secret!' }).expect(422);
    expect(wrong.text).toContain('The current password is incorrect.');
    await one.post('/profile/password', { current_password: PASSWORD, password: 'a longer secret!', password_confirmation: 'a longer secret!' }).expect(303);
    await one.get('/profile').expect(200);
    await two.get('/profile').expect(303);
  });

  test('when an admin makes an API key with a role on the API keys page then the secret shows once and the key is listed', async () => {
    const res = await web.post('/api-keys', { name: 'Reporting', role: 'analyst' }).expect(200);
    const secret = /id="created-secret-key">([^<]+)</.exec(res.text)?.[1];
    const pub = /id="created-public-key">([^<]+)</.exec(res.text)?.[1];
    expect(secret).toMatch(/^sk_/);
    await h.api().get('/contacts-type').set({ PublicKey: pub!, SecretKey: secret! }).expect(200);
    const again = await web.get('/api-keys').expect(200);
    expect(again.text).toContain('Reporting');
    expect(again.text).not.toContain(secret!);
    const id = (await h.runtime.db('api_keys').where({ public_key: pub }).first()).id;
    await web.post(`/api-keys/${id}/delete`).expect(303);
    await h.api().get('/contacts-type').set({ PublicKey: pub!, SecretKey: secret! }).expect(401);
  });
});
