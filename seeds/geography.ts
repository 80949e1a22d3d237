import fs from 'node:fs';
import type { Knex } from 'knex';
import { rowsPerInsert } from '../src/db/dialect';
import { markSeeded, seededVersion } from './markers';

/**
 * Countries, states and cities from the country-state-city package (pinned to an exact
 * version in package.json). Ids follow the package's order, so they stay stable as long
 * as the version does; upgrading the package needs a data migration for contacts and
 * senders that store these ids.
 */
interface PackageCountry { name: string; isoCode: string; phonecode: string }
interface PackageState { name: string; isoCode: string; countryCode: string }
type PackageCity = [name: string, countryCode: string, stateCode: string, ...rest: string[]];

/**
 * Read and parsed, not require()d: require would keep the ~100 MB of parsed data in the module
 * cache for the life of every process (the sending worker included).
 */
function asset<T>(file: string): T {
  return JSON.parse(fs.readFileSync(require.resolve(`country-state-city/lib/assets/${file}`), 'utf8')) as T;
}

/**
 * What the seeded rows are made of: the package's version and this seed's own revision (raise
 * it when the rows written change). A database marked with it is never read from JSON again.
 */
export function geographyDataVersion(): string {
  const pkg = JSON.parse(fs.readFileSync(require.resolve('country-state-city/package.json'), 'utf8')) as { version: string };
  return `country-state-city@${pkg.version}/1`;
}

export async function seedGeography(db: Knex): Promise<void> {
  const version = geographyDataVersion();
  if ((await seededVersion(db, 'geography')) === version) return;
  const countries = asset<PackageCountry[]>('country.json');
  const states = asset<PackageState[]>('state.json');
  const cities = asset<PackageCity[]>('city.json');

  const counts = await Promise.all(['countries', 'states', 'cities'].map((t) => db(t).count({ n: '*' }).first()));
  const [nCountries, nStates, nCities] = counts.map((r) => Number(r?.n ?? 0));
  if (nCountries === countries.length && nStates === states.length && nCities === cities.length) {
    // Seeded before markers existed: mark it, so no later start parses the JSON again.
    await markSeeded(db, 'geography', version);
    return;
  }

  const countryIds = new Map<string, number>();
  const countryRows = countries.map((c, i) => {
    countryIds.set(c.isoCode, i + 1);
    return { id: i + 1, name: c.name, iso2: c.isoCode, phone_code: c.phonecode };
  });
  const stateIds = new Map<string, number>();
  const stateRows = states.map((s, i) => {
    stateIds.set(`${s.countryCode}/${s.isoCode}`, i + 1);
    return { id: i + 1, country_id: countryIds.get(s.countryCode)!, name: s.name, iso2: s.isoCode };
  });

  const CHUNK = rowsPerInsert(db, 3);
  await db.transaction(async (trx) => {
    for (let i = 0; i < countryRows.length; i += CHUNK) {
      await trx('countries').insert(countryRows.slice(i, i + CHUNK)).onConflict('id').merge();
    }
    for (let i = 0; i < stateRows.length; i += CHUNK) {
      await trx('states').insert(stateRows.slice(i, i + CHUNK)).onConflict('id').merge();
    }
    for (let i = 0; i < cities.length; i += CHUNK) {
      const rows = cities.slice(i, i + CHUNK).map((c, j) => ({
        id: i + j + 1,
        state_id: stateIds.get(`${c[1]}/${c[2]}`)!,
        name: c[0],
      }));
      await trx('cities').insert(rows).onConflict('id').merge();
    }
    await markSeeded(trx, 'geography', version);
  });
}
