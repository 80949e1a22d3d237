import type { Knex } from 'knex';

/**
 * Opens recorded before flagged opens existed were never classified: they count as opens by
 * people, so "opens (excluding automated)" of old sends equals their unique opens.
 */
export async function up(knex: Knex): Promise<void> {
  await knex('send_messages').whereNotNull('opened_at').update({ human_opened_at: knex.ref('opened_at') });
  await knex('single_sends').update({ unique_human_opens: knex.ref('unique_opens') });
  await knex('automations').update({ total_unique_human_opens: knex.ref('total_unique_opens') });
}

export async function down(): Promise<void> {}
