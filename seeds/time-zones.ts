import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { getCountry } from 'countries-and-timezones';
import tzLookup from '@photostructure/tz-lookup';
import { currentTimeZone } from '../src/lib/time-zones';
import { markSeeded, seededVersion } from './markers';

/**
 * The time zone of each seeded country and, where a country spans several zones, of each of
 * its states: what a contact without a zone of its own is sent by. A country's zones come from
 * countries-and-timezones; a state's zone is the one at the state's coordinates (from
 * country-state-city) by @photostructure/tz-lookup, kept only when it is one of its country's
 * zones. A country of several zones is given the zone most of its states are in (a contact
 * with that country and no known state). Runs after the geography seed.
 */
interface PackageCountry { isoCode: string; latitude?: string; longitude?: string }
interface PackageState { isoCode: string; countryCode: string; latitude?: string | null; longitude?: string | null }

function asset<T>(file: string): T {
  return JSON.parse(fs.readFileSync(require.resolve(`country-state-city/lib/assets/${file}`), 'utf8')) as T;
}

/** A package's version, read from the package.json above its entry point (not every package exports its package.json). */
function versionOf(pkg: string): string {
  for (let dir = path.dirname(require.resolve(pkg)); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (!fs.existsSync(file)) continue;
    const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (manifest.name === pkg) return String(manifest.version);
  }
  return 'unknown';
}

export function timeZoneDataVersion(): string {
  return `country-state-city@${versionOf('country-state-city')}+countries-and-timezones@${versionOf('countries-and-timezones')}+tz-lookup@${versionOf('@photostructure/tz-lookup')}/1`;
}

/** The current names of a country's zones (aliases resolved, unknown ones left out). */
function zonesOf(iso2: string): string[] {
  const names = getCountry(iso2)?.timezones ?? [];
  return [...new Set(names.map((name) => currentTimeZone(name)).filter((name): name is string => name !== undefined))];
}

function zoneAt(latitude: unknown, longitude: unknown, zones: string[]): string | undefined {
  const lat = Number(latitude);
  const lon = Number(longitude);
  if (latitude === null || latitude === undefined || latitude === '' || !Number.isFinite(lat) || !Number.isFinite(lon)) return undefined;
  if (Math.abs(lat) > 90 || Math.abs(lon) > 180) return undefined;
  try {
    const zone = currentTimeZone(tzLookup(lat, lon));
    return zone && zones.includes(zone) ? zone : undefined;
  } catch {
    return undefined;
  }
}

export async function seedTimeZones(db: Knex): Promise<void> {
  const version = timeZoneDataVersion();
  if ((await seededVersion(db, 'time-zones')) === version) return;
  const countries = asset<PackageCountry[]>('country.json');
  const states = asset<PackageState[]>('state.json');
  const statesOf = new Map<string, PackageState[]>();
  for (const state of states) {
    const list = statesOf.get(state.countryCode) ?? [];
    list.push(state);
    statesOf.set(state.countryCode, list);
  }

  await db.transaction(async (trx) => {
    const countryIds = new Map<string, number>((await trx('countries').select('id', 'iso2')).map((r) => [String(r.iso2), Number(r.id)]));
    const stateIds = new Map<string, number>(
      (await trx('states').join('countries', 'countries.id', 'states.country_id').select('states.id', 'states.iso2', 'countries.iso2 as country'))
        .map((r) => [`${r.country}/${r.iso2}`, Number(r.id)]),
    );
    for (const country of countries) {
      const id = countryIds.get(country.isoCode);
      if (id === undefined) continue;
      const zones = zonesOf(country.isoCode);
      let zone: string | undefined = zones.length === 1 ? zones[0] : undefined;
      if (zones.length > 1) {
        // Each state at its coordinates; the country takes the zone of most of its states.
        const byZone = new Map<string, number[]>();
        for (const state of statesOf.get(country.isoCode) ?? []) {
          const stateId = stateIds.get(`${country.isoCode}/${state.isoCode}`);
          const stateZone = zoneAt(state.latitude, state.longitude, zones);
          if (stateId === undefined || !stateZone) continue;
          byZone.set(stateZone, [...(byZone.get(stateZone) ?? []), stateId]);
        }
        for (const [stateZone, ids] of byZone) await trx('states').whereIn('id', ids).update({ time_zone: stateZone });
        zone = [...byZone].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]))[0]?.[0] ?? zoneAt(country.latitude, country.longitude, zones);
      }
      await trx('countries').where({ id }).update({ time_zone: zone ?? null });
    }
    await markSeeded(trx, 'time-zones', version);
  });
}
