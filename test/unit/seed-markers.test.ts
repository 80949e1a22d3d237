import { runSeeds } from '../../seeds';
import { geographyDataVersion } from '../../seeds/geography';
import { timeZoneDataVersion } from '../../seeds/time-zones';
import { useHarness } from '../support/harness';

describe('reference data seeds behind data version markers', () => {
  const h = useHarness();

  test('when the database is seeded then geography and templates carry their data version markers', async () => {
    const db = h.runtime.db;
    const rows = await db('app_settings').where('key', 'like', 'seed:%').orderBy('key').select('key', 'value');
    expect(rows.map((r) => r.key)).toEqual(['seed:design_templates', 'seed:geography', 'seed:time-zones']);
    expect(rows[1].value).toBe(geographyDataVersion());
    expect(rows[1].value).toMatch(/^country-state-city@3\.2\.1\/\d+$/);
  });

  test('when the geography marker matches then a later start writes no geography (the JSON is not read again)', async () => {
    const db = h.runtime.db;
    const city = await db('cities').orderBy('id', 'desc').first('id', 'state_id', 'name');
    await db('cities').where({ id: city.id }).delete();
    try {
      await runSeeds(db);
      expect(await db('cities').where({ id: city.id }).first()).toBeUndefined();
    } finally {
      await db('cities').insert(city);
    }
  });

  test('when the geography marker is missing or stale then the seed runs again and marks the database', async () => {
    const db = h.runtime.db;
    const city = await db('cities').orderBy('id', 'desc').first('id', 'state_id', 'name');
    await db('cities').where({ id: city.id }).delete();
    await db('app_settings').where({ key: 'seed:geography' }).update({ value: 'country-state-city@0.0.0/0' });
    await runSeeds(db);
    expect(await db('cities').where({ id: city.id }).first('id', 'state_id', 'name')).toEqual(city);
    expect((await db('app_settings').where({ key: 'seed:geography' }).first('value')).value).toBe(geographyDataVersion());
  });

  test('when a built-in template was changed in the database and its marker is stale then the seed restores it', async () => {
    const db = h.runtime.db;
    const before = await db('design_templates').where({ id: 1 }).first('template_name');
    await db('design_templates').where({ id: 1 }).update({ template_name: 'changed' });
    await runSeeds(db);
    expect((await db('design_templates').where({ id: 1 }).first('template_name')).template_name).toBe('changed');
    await db('app_settings').where({ key: 'seed:design_templates' }).delete();
    await runSeeds(db);
    expect((await db('design_templates').where({ id: 1 }).first('template_name')).template_name).toBe(before.template_name);
  });

  test('when the time-zone marker is stale then the countries\' and states\' zones are written again', async () => {
    const db = h.runtime.db;
    const california = () => db('states').join('countries', 'countries.id', 'states.country_id').where({ 'countries.iso2': 'US', 'states.iso2': 'CA' }).first('states.id', 'states.time_zone');
    expect((await california()).time_zone).toBe('America/Los_Angeles');
    expect((await db('countries').where({ iso2: 'DE' }).first('time_zone')).time_zone).toBe('Europe/Berlin');
    await db('states').where({ id: (await california()).id }).update({ time_zone: null });
    await runSeeds(db);
    expect((await california()).time_zone).toBeNull();
    await db('app_settings').where({ key: 'seed:time-zones' }).update({ value: 'stale' });
    await runSeeds(db);
    expect((await california()).time_zone).toBe('America/Los_Angeles');
    expect((await db('app_settings').where({ key: 'seed:time-zones' }).first('value')).value).toBe(timeZoneDataVersion());
  });
});
