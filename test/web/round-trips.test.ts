import { createMailTransport } from '../../src/mail/transport';
import { addVerifiedSender, berlin } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useTwoAccounts } from '../support/web';

/**
 * Each page answers in a bounded number of database round trips, counted from the
 * queries Knex runs (the session lookup included), whatever the size of the account.
 */
describe('dashboard round trips', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);
  let group = 0;
  let utr = '';

  beforeAll(async () => {
    const ctx = { userId: t.alice.user_id };
    const { services } = h.runtime;
    for (const name of ['One', 'Two', 'Three']) await services.contactTypes.add(ctx, { name });
    group = await services.unsubscribeGroups.add(ctx, { group_name: 'G', description: 'd', is_display: 1 });
    await services.unsubscribeGroups.addRecipients(ctx, group, ['a@example.com', 'b@example.com']);
    await services.globalUnsubscribes.add(ctx, ['c@example.com']);
    await services.notificationRecipients.save(ctx, { email_address: 'n@example.com', email_owner: 'N' });
    await services.fields.addCustom(ctx, { field_name: 'company', field_type: 'text' });
    const type = await services.contactTypes.add(ctx, { name: 'Audience' });
    utr = await services.singleSends.create(ctx, {
      single_send_name: 'S', subject: 'S', preheader: 'P', template_id: (await services.designTemplates.list()).rows[0].id, template_json: null, template_html: '<p>x</p>',
      sender_id: await addVerifiedSender(h, t.alice, await berlin(h)), unsubscribe_group_id: group,
      recipient_id: [{ id: String(type), table: 'contacts_' }], exclude_specific_recipient_id: [], schedule_type: 1, schedule_date: '2031-01-15', schedule_time: '09:30:00',
    });
    const transport = createMailTransport(h.runtime.config);
    await transport.send({ accountId: t.alice.user_id, from: 'a@example.com', to: 'b@example.com', subject: 'S', html: '<p>x</p>' });
    transport.close();
  });

  async function queriesOf(path: string): Promise<number> {
    let count = 0;
    const count1 = () => {
      count += 1;
    };
    h.runtime.db.on('query', count1);
    try {
      await t.web.get(path).expect(200);
    } finally {
      h.runtime.db.removeListener('query', count1);
    }
    return count;
  }

  test.each([
    ['/', 3],
    ['/contact-types', 2],
    ['/custom-fields', 3],
    ['/unsubscribe-groups', 2],
    ['/global-unsubscribes', 3],
    ['/notification-recipients', 3],
    ['/outbox', 1],
    ['/api-keys', 2],
    ['/team', 2],
    ['/profile', 3],
    ['/settings', 1],
    ['/design-templates', 2],
    ['/senders', 2],
    ['/single-sends', 4],
    ['/contacts', 5],
    ['/contacts/import', 3],
    ['/segments', 4],
    ['/segments/new', 4], // the contact types, custom fields and sends an engagement condition can name
    ['/suppressions', 3],
    ['/signup-forms', 2],
    ['/audit-log', 4],
    ['/relays', 4],
  ])('when %s is shown then it takes %i round trips', async (path, expected) => {
    expect(await queriesOf(path)).toBe(expected);
  });

  test('when the automations list is shown then it takes 5 round trips (a page, its total, and the names of contact types and segments)', async () => {
    expect(await queriesOf('/automations')).toBe(5);
  });

  test('when a single send’s page is shown then it takes 7 round trips (the send with its open tokens, the audience names, its opens over time, who created and started it)', async () => {
    expect(await queriesOf(`/single-sends/${utr}`)).toBe(7);
  });

  test('when a group page is shown then it takes 5 round trips (the group, and its recipients through the shared service)', async () => {
    expect(await queriesOf(`/unsubscribe-groups/${group}`)).toBe(5);
  });
});
