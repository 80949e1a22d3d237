import request from 'supertest';
import { useHarness } from '../support/harness';

/** The reference's placeholder names, in its order. */
const REFERENCE_CONTENTS = [
  'first_name', 'last_name', 'email', 'alt_email', 'country', 'state', 'city', 'address_line1', 'address_line2',
  'state_province_region', 'postal_code', 'full_name', 'father_name', 'designation', 'age', 'company_name',
  'birth_date', 'join_date', 'sender_name', 'sender_address', 'unsubscribe_preferences',
];

interface Template {
  id: number;
  template_name: string;
  preview_image: string;
  json_code: string;
  html_code: string;
  is_blank: number;
}

describe('design templates and dynamic content', () => {
  const h = useHarness();
  const [alice] = h.accounts(1);
  let templates: Template[];

  beforeAll(async () => {
    const res = await h.api(alice).get('/get-design/template').expect(200);
    templates = res.body.message.templates;
  });

  test('when templates are listed then id 1 is the blank one and at least three real ones follow', async () => {
    const res = await h.api(alice).get('/get-design/template').expect(200);
    expect(res.body.status).toBe('success');
    expect(Object.keys(res.body.message)).toEqual(['templates']);
    expect(templates[0]).toEqual({
      id: 1,
      template_name: 'Blank',
      preview_image: 'blank.png',
      json_code: expect.any(String),
      html_code: expect.stringContaining('<html'),
      is_blank: 1,
      created_at: null,
      updated_at: null,
    });
    const real = templates.filter((t) => t.is_blank === 0);
    expect(real.length).toBeGreaterThanOrEqual(3);
    expect(templates.map((t) => t.id)).toEqual(templates.map((_, i) => i + 1));
  });

  test('when a template is read then its JSON parses and its placeholders are dynamic-content names', () => {
    for (const template of templates) {
      expect(() => JSON.parse(template.json_code)).not.toThrow();
      const used = [...template.html_code.matchAll(/\(\(([a-z0-9_]+)\)\)/g)].map((m) => m[1]);
      // The extension's web-view link ("View in your browser") besides the reference's names.
      for (const name of used) expect([...REFERENCE_CONTENTS, 'webview_url']).toContain(name);
    }
    expect(templates.filter((t) => t.is_blank === 0).every((t) => t.html_code.includes('<a href="((webview_url))"'))).toBe(true);
  });

  test('when a real template is read then it is responsive HTML', () => {
    for (const template of templates.filter((t) => t.is_blank === 0)) {
      expect(template.html_code).toMatch(/<meta name="viewport"/);
      expect(template.html_code).toMatch(/@media/);
    }
  });

  test('when every preview image is fetched then it is served as a PNG from /templates/', async () => {
    for (const template of templates) {
      const res = await request(h.runtime.app).get(`/templates/${template.preview_image}`).expect(200);
      expect(res.headers['content-type']).toBe('image/png');
      expect((res.body as Buffer).subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
    }
    await request(h.runtime.app).get('/templates/no-such.png').expect(404);
  });

  test('when dynamic content is asked then contents lists the reference’s placeholder names, then the extension webview_url', async () => {
    const res = await h.api(alice).get('/get-dynamic/content').expect(200);
    expect(res.body).toEqual({ status: 'success', message: { contents: [...REFERENCE_CONTENTS, 'webview_url'] } });
  });

  test('when keys are missing then both lists refuse with 401', async () => {
    await h.api().get('/get-design/template').expect(401);
    await h.api().get('/get-dynamic/content').expect(401);
  });

  test('when paged then templates come with pagination', async () => {
    const res = await h.api(alice).get('/get-design/template?page=1&per_page=2').expect(200);
    expect(res.body.message.templates.map((t: Template) => t.id)).toEqual([1, 2]);
    expect(res.body.message.pagination).toEqual({ page: 1, per_page: 2, total: templates.length });
  });
});
