import { DYNAMIC_CONTENT } from '../../src/lib/constants';
import { useHarness } from '../support/harness';
import { useTwoAccounts } from '../support/web';

describe('dashboard design templates', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);

  test('when the gallery is shown then every seeded template is there with its preview, and every placeholder is listed', async () => {
    const { rows } = await h.runtime.services.designTemplates.list();
    const res = await t.web.get('/design-templates').expect(200);
    for (const template of rows) {
      expect(res.text).toContain(`<a class="template-card" href="/design-templates/${template.id}">`);
      expect(res.text).toContain(`<img src="/templates/${template.preview_image}" alt="" loading="lazy">`);
    }
    for (const name of DYNAMIC_CONTENT) expect(res.text).toContain(`<code>((${name}))</code>`);
    const image = /<img src="([^"]+)"/.exec(res.text)?.[1] ?? '';
    await t.web.get(image).expect(200).expect('content-type', 'image/png');
  });

  test('when a template is opened then its HTML is framed under the sandbox CSP; an unknown id is a 404', async () => {
    const [template] = (await h.runtime.services.designTemplates.list()).rows.filter((r) => r.is_blank === 0);
    const page = await t.web.get(`/design-templates/${template.id}`).expect(200);
    expect(page.text).toContain(`<iframe class="message-frame" title="The template as a mail program shows it" sandbox src="/design-templates/${template.id}/html"></iframe>`);
    const html = await t.web.get(`/design-templates/${template.id}/html`).expect(200);
    expect(html.headers['content-security-policy']).toContain('sandbox');
    expect(html.text).toBe(template.html_code);
    await t.web.get('/design-templates/99999').expect(404);
  });
});
