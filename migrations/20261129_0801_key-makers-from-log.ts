import type { Knex } from 'knex';

/**
 * The makers of keys made before `api_keys.made_by` existed, read from the audit log's
 * `api_key.created` entries (oldest key first, so a key made with another key takes that key's
 * maker). A key whose entry is gone (pruned) keeps no maker and the page says it is not recorded.
 */
export async function up(knex: Knex): Promise<void> {
  const keys: { id: number; user_id: number }[] = await knex('api_keys').whereNull('made_by').whereNull('made_by_name').orderBy('id', 'asc').select('id', 'user_id');
  const makers = new Map<number, { made_by: number | null; made_by_name: string }>();
  for (const key of keys) {
    const entry = await knex('audit_log')
      .where({ user_id: key.user_id, action: 'api_key.created', record_type: 'api_key', record_id: String(key.id) })
      .orderBy('id', 'asc')
      .first('actor_type', 'actor_id', 'actor_name');
    if (!entry) continue;
    let maker: { made_by: number | null; made_by_name: string } | undefined;
    if (entry.actor_type === 'user') maker = { made_by: Number(entry.actor_id), made_by_name: String(entry.actor_name) };
    else if (entry.actor_type === 'api_key' && entry.actor_id === null) maker = { made_by: null, made_by_name: String(entry.actor_name) };
    else if (entry.actor_type === 'api_key') maker = makers.get(Number(entry.actor_id));
    if (!maker) continue;
    makers.set(Number(key.id), maker);
    await knex('api_keys').where({ id: key.id }).update(maker);
  }
}

export async function down(): Promise<void> {
  // The makers read from the log stay: the columns go with the schema migration before this one.
}
