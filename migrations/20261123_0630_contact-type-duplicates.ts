import type { Knex } from 'knex';

/**
 * Data only, before the unique index of the next migration: live contact types of one account
 * whose names are equal ignoring case and surrounding spaces keep the oldest name as it is;
 * each later one gets its id appended (`Customers (12)`), so every picker can tell them apart
 * and the index can be built. Nothing is deleted.
 */
export async function up(knex: Knex): Promise<void> {
  const rows: { id: number; user_id: number; name: string }[] = await knex('contact_types')
    .whereNull('deleted_at')
    .orderBy('id')
    .select('id', 'user_id', 'name');
  const seen = new Set<string>();
  for (const row of rows) {
    const key = `${row.user_id}:${row.name.trim().toLowerCase()}`;
    if (!seen.has(key)) {
      seen.add(key);
      continue;
    }
    const suffix = ` (${row.id})`;
    await knex('contact_types').where({ id: row.id }).update({ name: row.name.trim().slice(0, 255 - suffix.length) + suffix });
  }
}

export async function down(): Promise<void> {
  // The renamed types keep their new names.
}
