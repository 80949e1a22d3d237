import type { Knex } from 'knex';

/**
 * Contacts store the country as its id. People write a country as a name ("France"), an
 * ISO code ("FR") or the id itself ("75"); this resolves each to the id, ignoring case.
 */
export type CountryResolver = (value: string) => number | undefined;

export async function loadCountryResolver(db: Knex): Promise<CountryResolver> {
  const rows: { id: number; name: string; iso2: string }[] = await db('countries').select('id', 'name', 'iso2');
  const byText = new Map<string, number>();
  const ids = new Set<number>();
  for (const row of rows) {
    const id = Number(row.id);
    ids.add(id);
    byText.set(row.name.trim().toLowerCase(), id);
    byText.set(row.iso2.trim().toLowerCase(), id);
  }
  return (value) => {
    const text = value.trim();
    if (/^\d+$/.test(text)) return ids.has(Number(text)) ? Number(text) : undefined;
    return byText.get(text.toLowerCase());
  };
}

export async function countryExists(db: Knex, id: number): Promise<boolean> {
  return Boolean(await db('countries').where({ id }).first('id'));
}

/** The country's name, for segment rules on `country` written as an id or ISO code. */
export async function countryName(db: Knex, value: string): Promise<string> {
  const id = (await loadCountryResolver(db))(value);
  if (id === undefined) return value;
  const row = await db('countries').where({ id }).first('name');
  return row ? String(row.name) : value;
}
