import { addVerifiedSender, berlin } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { asFragment, useTwoAccounts } from '../support/web';

describe('dashboard: Liquid errors in designs', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);

  test('when a design whose Liquid does not parse is saved as a template then it is refused with its line', async () => {
    const refused = await asFragment(
      t.web.post('/my-templates', { template_name: 'Broken', template_html: '<p>Hi</p>\n<p>{% if first_name %}Hi</p>' }),
      'own-template-status',
    ).expect(422);
    expect(refused.text).toContain('Liquid error on line 2: tag {% if first_name %} not closed');
    expect(await h.runtime.services.ownTemplates.list({ userId: t.alice.user_id })).toEqual([]);
  });

  test('when the composer saves a subject whose Liquid does not parse then the form comes back with the message beside the subject', async () => {
    const ctx = { userId: t.alice.user_id };
    const { services } = h.runtime;
    const sender = await addVerifiedSender(h, t.alice, await berlin(h), { nickname: 'News', from_email: 'news@acme.example' });
    const group = await services.unsubscribeGroups.add(ctx, { group_name: 'Newsletter', description: 'News', is_display: 1 });
    const type = await services.contactTypes.add(ctx, { name: 'Customers' });
    const res = await t.web.post('/single-sends/new', {
      single_send_name: 'Logic', subject: 'Hi {{ first_name | shout }}', preheader: 'P', sender_id: String(sender), unsubscribe_group_id: String(group), template_id: '1',
      template_html: '<p>{{ first_name }}</p>', recipient_id: `contacts_${type}`, schedule_type: '0',
    }).expect(422);
    expect(res.text).toMatch(/<p class="field-error" id="subject-error">Liquid error on line 1: undefined filter: shout\.<\/p>/);
    expect(res.text).toContain('value="Hi {{ first_name | shout }}"');
  });
});
