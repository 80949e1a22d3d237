import type { Knex } from 'knex';

/**
 * What pruning old data needs:
 * - `link_clicks (message_id)`: a message's clicks are found (and cascade-deleted with the
 *   message) without reading the whole table; its primary key starts with the link.
 * - `send_messages.engagement_pruned_at`: when the message's opens and clicks were deleted.
 *   A later open or click of it then adds to the totals only: it is not a first open again.
 * - `send_messages_engaged`: the messages with opens or clicks still kept, which is all the
 *   pruning of engagement has to read.
 * - `send_messages_system`: the service's own mail (kind 3), a few rows among the campaigns'.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('link_clicks', (t) => t.index(['message_id'], 'link_clicks_message'));
  await knex.schema.alterTable('send_messages', (t) => {
    t.timestamp('engagement_pruned_at', { useTz: true, precision: 6 }).nullable();
  });
  await knex.raw(
    'create index send_messages_engaged on send_messages (id) where (opened_at is not null or clicked_at is not null) and engagement_pruned_at is null',
  );
  await knex.raw('create index send_messages_system on send_messages (id) where kind = 3');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists send_messages_system');
  await knex.raw('drop index if exists send_messages_engaged');
  await knex.schema.alterTable('send_messages', (t) => t.dropColumn('engagement_pruned_at'));
  await knex.schema.alterTable('link_clicks', (t) => t.dropIndex(['message_id'], 'link_clicks_message'));
}
