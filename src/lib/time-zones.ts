import { getAllTimezones } from 'countries-and-timezones';

/**
 * The IANA time zones an account may choose, from countries-and-timezones (kept up to date
 * with the tz database): every current zone and every alias of one (links such as
 * `Asia/Calcutta` → `Asia/Kolkata`, `Europe/Kiev` → `Europe/Kyiv`), limited to the names the
 * runtime's ICU computes with. An alias is stored as its current name. UTC, the default,
 * stays spelled `UTC`; its aliases (`Etc/UTC`, `Zulu`, …) become it.
 */
const DEFAULT_ZONE = 'UTC';

function runtimeKnows(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

const zones = getAllTimezones({ deprecated: true }) as Record<string, { name: string; aliasOf: string | null; deprecated?: boolean }>;

function currentName(name: string): string {
  let zone = zones[name];
  for (let hops = 0; zone?.aliasOf && zones[zone.aliasOf] && hops < 5; hops += 1) zone = zones[zone.aliasOf];
  const current = zone?.name ?? name;
  return current === 'Etc/UTC' ? DEFAULT_ZONE : current;
}

/** Lower-cased name (IANA names ignore case) → current name. */
const CURRENT_BY_NAME = new Map<string, string>(
  Object.keys(zones)
    .filter(runtimeKnows)
    .map((name) => [name.toLowerCase(), currentName(name)]),
);

/** Current zone names for a picker: UTC first, then by name. */
export const CURRENT_TIME_ZONES: readonly string[] = [
  DEFAULT_ZONE,
  ...[...new Set(CURRENT_BY_NAME.values())].filter((name) => name !== DEFAULT_ZONE && !zones[name]?.deprecated).sort(),
];

/** The current name of a zone or of one of its aliases (ignoring case); undefined for an unknown zone. */
export function currentTimeZone(value: string): string | undefined {
  return CURRENT_BY_NAME.get(value.trim().toLowerCase());
}

const offsetFormats = new Map<string, Intl.DateTimeFormat>();

/** `UTC+05:30`: how far the zone is from UTC at `at` (daylight saving time included). */
export function utcOffset(timeZone: string, at: Date): string {
  let format = offsetFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' });
    offsetFormats.set(timeZone, format);
  }
  const name = format.formatToParts(at).find((part) => part.type === 'timeZoneName')?.value ?? 'GMT';
  return name === 'GMT' ? 'UTC+00:00' : name.replace('GMT', 'UTC');
}

/** The picker's options: each current zone with its offset now, `Asia/Kolkata (UTC+05:30)`. */
export function timeZoneOptions(at: Date): { value: string; label: string }[] {
  return CURRENT_TIME_ZONES.map((value) => ({ value, label: `${value} (${utcOffset(value, at)})` }));
}
