import type { Knex } from 'knex';

/**
 * Data version markers of the reference-data seeds, kept in app_settings (`seed:<name>`): a
 * seed whose marker matches its data's version does nothing on a start, not even read its data.
 */
const keyOf = (name: string) => `seed:${name}`;

export async function seededVersion(db: Knex, name: string): Promise<string | undefined> {
  const row = await db('app_settings').where({ key: keyOf(name) }).first('value');
  return row ? String(row.value) : undefined;
}

/** Records the version in the seed's own transaction, so a marker never outlives a rolled-back seed. */
export async function markSeeded(trx: Knex, name: string, version: string): Promise<void> {
  await trx('app_settings').insert({ key: keyOf(name), value: version }).onConflict('key').merge();
}
