import { getAllTimezones } from 'countries-and-timezones';

/**
 * The IANA time zones an account may choose, from countries-and-timezones (kept up to date
 * with the tz database): every current zone and every alias of one (links such as
 * `Asia/Calcutta` → `Asia/Kolkata`, `Europe/Kiev` → `Europe/Kyiv`), limited to the names the
 * runtime's ICU computes with. An alias is stored as its current name. UTC, the default,
 * stays spelled `UTC`; its aliases (`Etc/UTC`, `Zulu`, …) become it.
 */
const DEFAULT_ZONE = 'UTC';

const zones = getAllTimezones({ deprecated: true }) as Record<string, { name: string; aliasOf: string | null; deprecated?: boolean }>;

function currentName(name: string): string {
  let zone = zones[name];
  for (let hops = 0; zone?.aliasOf && zones[zone.aliasOf] && hops < 5; hops += 1) zone = zones[zone.aliasOf];
  const current = zone?.name ?? name;
  return current === 'Etc/UTC' ? DEFAULT_ZONE : current;
}

/** Lower-cased name (IANA names ignore case) → current name. */
const CURRENT_BY_NAME = new Map<string, string>(Object.keys(zones).map((name) => [name.toLowerCase(), currentName(name)]));

/** A formatter of the zone's UTC offset; undefined when the runtime's ICU does not know the zone. */
function offsetFormat(timeZone: string): Intl.DateTimeFormat | undefined {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' });
  } catch {
    return undefined;
  }
}

/** The current name of a zone or of one of its aliases (ignoring case); undefined for an unknown zone. */
export function currentTimeZone(value: string): string | undefined {
  const current = CURRENT_BY_NAME.get(value.trim().toLowerCase());
  return current && offsetFormat(current) ? current : undefined;
}

/**
 * Current zone names for a picker (UTC first, then by name) with their offset formatters. Built
 * on first use: one formatter per zone is a few hundred milliseconds a process need not spend
 * at start.
 */
let pickerZones: ReadonlyArray<[name: string, format: Intl.DateTimeFormat]> | undefined;

function currentZones(): ReadonlyArray<[string, Intl.DateTimeFormat]> {
  if (!pickerZones) {
    const names = [...new Set(CURRENT_BY_NAME.values())].filter((name) => name !== DEFAULT_ZONE && !zones[name]?.deprecated).sort();
    pickerZones = [DEFAULT_ZONE, ...names].flatMap((name) => {
      const format = offsetFormat(name);
      return format ? [[name, format] as [string, Intl.DateTimeFormat]] : [];
    });
  }
  return pickerZones;
}

/** `UTC+05:30` from a `longOffset` formatter: how far the zone is from UTC at `at`. */
function offsetAt(format: Intl.DateTimeFormat, at: Date): string {
  const name = format.formatToParts(at).find((part) => part.type === 'timeZoneName')?.value ?? 'GMT';
  return name === 'GMT' ? 'UTC+00:00' : name.replace('GMT', 'UTC');
}

/** The picker's options: each current zone with its offset at `at`, `Asia/Kolkata (UTC+05:30)`. */
export function timeZoneOptions(at: Date): { value: string; label: string }[] {
  return currentZones().map(([value, format]) => ({ value, label: `${value} (${offsetAt(format, at)})` }));
}
