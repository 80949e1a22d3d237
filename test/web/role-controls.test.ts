import { Parser } from 'htmlparser2';
import { permissionOf } from '../../src/http/permissions';
import type { TeamRole } from '../../src/lib/constants';
import { addAutomation, addContact, addContactType, addCustomField, addSegment, audienceOf, berlin, scheduleBody, singleSendBody } from '../support/fixtures';
import { TestAccount, useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { addMember, signInMember } from '../support/team';
import { signIn, WebClient } from '../support/web';

/** A control of a page: where it leads and how (a link or a GET form reads, a POST form changes). */
interface Control {
  method: 'GET' | 'POST';
  path: string;
  /** The tag as written, to name it in a failure. */
  tag: string;
}

interface PageControls {
  controls: Control[];
  /** Ids of the forms on the page. */
  forms: Set<string>;
  /** Buttons and inputs that belong to a form elsewhere on the page (`form="id"`), by that id. */
  members: { form: string; tag: string }[];
  /** Links to follow when walking the pages (plain GET links, not downloads). */
  links: string[];
}

const local = (href: string | undefined): string | undefined => (href && href.startsWith('/') && !href.startsWith('//') ? href : undefined);
const pathOf = (href: string) => href.replace(/[?#].*$/, '') || '/';

/** Every control of a page, read by an HTML parser (the page as a browser gets it). */
function controlsOf(html: string, here: string): PageControls {
  const page: PageControls = { controls: [], forms: new Set(), members: [], links: [] };
  const parser = new Parser({
    onopentag(name, a) {
      const tag = `<${name} ${Object.entries(a).map(([k, v]) => `${k}="${v}"`).join(' ')}>`;
      const add = (method: Control['method'], target: string | undefined) => {
        const path = local(target);
        if (path) page.controls.push({ method, path: pathOf(path), tag });
      };
      if (name === 'a' && local(a.href)) {
        add('GET', a.href);
        if (a.download === undefined && !/\.(csv|rss|xml|json)$/.test(pathOf(a.href))) page.links.push(pathOf(a.href));
      }
      if (name === 'form') {
        if (a.id) page.forms.add(a.id);
        const post = (a.method ?? 'get').toLowerCase() === 'post' || a['hx-post'] !== undefined;
        add(post ? 'POST' : 'GET', a['hx-post'] ?? a.action ?? a['hx-get'] ?? here);
      } else {
        if (a['hx-post'] !== undefined) add('POST', a['hx-post']);
        if (a['hx-get'] !== undefined) add('GET', a['hx-get']);
      }
      if (a.formaction !== undefined) add('POST', a.formaction);
      if ((name === 'button' || name === 'input') && a.form) page.members.push({ form: a.form, tag });
    },
  });
  parser.write(html);
  parser.end();
  return page;
}

/** Whether the declaration lets the role use the address (addresses of no area, such as assets, are everyone's). */
function allowed(role: TeamRole, method: Control['method'], path: string): boolean {
  try {
    return permissionOf('web', method, path).roles.includes(role);
  } catch {
    return true;
  }
}

/**
 * Every page a person of the role can reach by following the dashboard's own links from Home
 * (each address once), and what each showed.
 */
async function walk(web: WebClient): Promise<Map<string, { status: number; page: PageControls; html: string }>> {
  const seen = new Map<string, { status: number; page: PageControls; html: string }>();
  const queue = ['/'];
  while (queue.length) {
    const path = queue.shift()!;
    if (seen.has(path) || path === '/logout') continue;
    const res = await web.get(path);
    const page = controlsOf(res.text, path);
    seen.set(path, { status: res.status, page, html: res.text });
    if (res.status === 200) queue.push(...page.links.filter((link) => !seen.has(link)));
  }
  return seen;
}

/** What a control the role may not use looks like in a failure: the page, the tag, where it leads. */
function refusedControls(role: TeamRole, pages: Awaited<ReturnType<typeof walk>>): string[] {
  const found: string[] = [];
  for (const [path, { page }] of pages) {
    for (const c of page.controls) if (!allowed(role, c.method, c.path)) found.push(`${path}: ${c.tag} (${c.method} ${c.path})`);
    for (const m of page.members) if (!page.forms.has(m.form)) found.push(`${path}: ${m.tag} belongs to no form on the page`);
  }
  return found;
}

describe('what each role sees on the dashboard', () => {
  const sink = useSmtpSink();
  const h = useHarness({ SMTP_URL: () => sink.url });
  let owner: TestAccount;
  const web = {} as Record<TeamRole, WebClient>;

  beforeAll(async () => {
    owner = await h.account();
    // One of each record the pages list, so rows and their buttons are there to be seen.
    const place = await berlin(h);
    const audience = await audienceOf(h, owner, place);
    await addCustomField(h, owner, 'plan', 'text');
    const typeId = await addContactType(h, owner, 'Readers');
    await addContact(h, owner, { email: 'ann@example.com', first_name: 'Ann', contact_type_id: typeId, country: place.countryId });
    await addSegment(h, owner, typeId, 'Loyal', [{ email: 'ann@example.com' }]);
    await h.api(owner).post('/single/send/create').send(singleSendBody(audience, { schedule_type: 1, schedule_date: '2099-01-01', schedule_time: '09:00:00' })).expect(200);
    const automation = await addAutomation(h, owner, { automation_for: `contacts_${typeId}` });
    await h.api(owner).post('/automations/schedule/create').send(scheduleBody(automation, audience.senderId)).expect(200);
    await h.api(owner).post('/global-unsubscribes/save').type('form').send({ email_address: 'gone@example.com' }).expect(200);
    await h.api(owner).post('/suppressions/save').type('form').send({ email_address: 'bounced@example.com' }).expect(200);
    await h.runtime.services.signupForms.add({ userId: owner.user_id }, { name: 'Newsletter form', contact_type_id: typeId, fields: [], group_ids: [], thank_you: '', sender_id: audience.senderId });
    web.owner = await signIn(h, owner);
    for (const role of ['admin', 'editor', 'analyst'] as const) web[role] = await signInMember(h, owner, (await addMember(h, sink, owner, role)).email);
  });

  describe.each(['owner', 'admin', 'editor', 'analyst'] as const)('as the %s', (role) => {
    let pages: Awaited<ReturnType<typeof walk>>;
    beforeAll(async () => {
      pages = await walk(web[role]);
    });

    test('when they follow every link of the dashboard then no page offers a control their role is refused, and every page opens', () => {
      expect(pages.size).toBeGreaterThan(role === 'owner' || role === 'admin' ? 40 : 25);
      expect(refusedControls(role, pages)).toEqual([]);
      expect([...pages].filter(([, p]) => p.status !== 200).map(([path, p]) => `${path} ${p.status}`)).toEqual([]);
    });
  });

  const contactsPage = async (role: TeamRole) => controlsOf((await web[role].get('/contacts').expect(200)).text, '/contacts');
  const deletes = (page: PageControls) => page.members.filter((m) => /name="ids"/.test(m.tag));

  test('when an analyst opens Contacts then the contacts are listed with no checkbox, Delete, New or Import, and Export is there', async () => {
    const res = await web.analyst.get('/contacts').expect(200);
    const page = controlsOf(res.text, '/contacts');
    expect(res.text).toContain('ann@example.com');
    expect(deletes(page)).toEqual([]);
    expect(res.text).not.toMatch(/type="checkbox"|>Delete</);
    expect(page.controls.filter((c) => c.method === 'POST')).toEqual([expect.objectContaining({ path: '/logout' })]);
    expect(page.controls.map((c) => c.path)).not.toEqual(expect.arrayContaining(['/contacts/new']));
    expect(page.controls.map((c) => c.path)).not.toEqual(expect.arrayContaining(['/contacts/import']));
    expect(page.controls.map((c) => c.path)).toEqual(expect.arrayContaining(['/contacts/export.csv']));
  });

  test.each(['owner', 'admin', 'editor'] as const)('when the %s opens Contacts then each row has its checkbox and Delete, and New and Import are there', async (role) => {
    const page = await contactsPage(role);
    expect(deletes(page).length).toBeGreaterThanOrEqual(2);
    expect(page.controls.map((c) => `${c.method} ${c.path}`)).toEqual(expect.arrayContaining(['GET /contacts/new', 'GET /contacts/import', 'POST /contacts/delete']));
  });

  test('when an editor or analyst opens Home then no link leads to the team, keys, settings or outbox, and the owner\'s Home has them', async () => {
    for (const role of ['editor', 'analyst'] as const) {
      const paths = controlsOf((await web[role].get('/').expect(200)).text, '/').controls.map((c) => c.path);
      for (const admin of ['/team', '/api-keys', '/settings', '/outbox', '/relays', '/domains']) expect([role, paths.includes(admin)]).toEqual([role, false]);
    }
    const owners = controlsOf((await web.owner.get('/').expect(200)).text, '/').controls.map((c) => c.path);
    expect(owners).toEqual(expect.arrayContaining(['/team', '/api-keys', '/settings', '/outbox']));
  });

  test('when an analyst opens a single send then it shows no edit, delete, duplicate or send controls, and the editor\'s page has them', async () => {
    const list = controlsOf((await web.owner.get('/single-sends').expect(200)).text, '/single-sends');
    const show = list.links.find((l) => /^\/single-sends\/[\w-]+$/.test(l) && l !== '/single-sends/new')!;
    const analyst = controlsOf((await web.analyst.get(show).expect(200)).text, show);
    const editor = controlsOf((await web.editor.get(show).expect(200)).text, show);
    expect(analyst.controls.filter((c) => c.path.startsWith('/single-sends/') && (c.method === 'POST' || /\/edit$/.test(c.path)))).toEqual([]);
    expect(editor.controls.filter((c) => c.path.startsWith('/single-sends/') && (c.method === 'POST' || /\/edit$/.test(c.path))).length).toBeGreaterThan(0);
  });
});
