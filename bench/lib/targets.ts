/**
 * The figures users feel, each with its target; every benchmark prints its figure beside the
 * target by these names (bench/README.md lists them). Ratios are to a limit measured in the same
 * run on the same machine, so a shared, busy host moves them less than the raw figures.
 */
export interface Target {
  name: string;
  /** At least this (a ratio, or rows per second). */
  min?: number;
  /** At most this. */
  max?: number;
  unit: string;
}

export const TARGETS = {
  send: { name: 'send rate / bare nodemailer (SQLite)', min: 1.0, unit: '×' },
  sendPostgresTwoWorkers: { name: 'send rate with two workers / bare nodemailer (PostgreSQL)', min: 1.0, unit: '×' },
  importSqlite: { name: 'import / its limit (SQLite)', min: 0.9, unit: '×' },
  /** The database alone merging the same file into the same schema (indexes and triggers included) bounds it on this machine. */
  importPostgres: { name: 'import / the database alone merging the same file (PostgreSQL)', min: 1.0, unit: '×' },
  sendFirstBatchPostgres: { name: 'send start to its first messages queued (PostgreSQL)', max: 1000, unit: 'ms' },
  sendExpansionPostgres: { name: 'a running send\'s ledger written in batches (PostgreSQL)', min: 100_000, unit: 'rows/s' },
  list: { name: 'list of 100,000 contacts / bare server', min: 0.9, unit: '×' },
  api: { name: 'API requests / bare Express', min: 0.35, unit: '×' },
  /** One prepared statement per request bounds it: bare Express running the same statement through `pg`. */
  apiPostgres: { name: 'API requests / bare Express with the same statement through pg (PostgreSQL)', min: 0.8, unit: '×' },
  start: { name: 'start to first answer', max: 1.5, unit: 's' },
  rss: { name: 'RSS at rest', max: 100, unit: 'MiB' },
  healthzUnderPreviews: { name: 'slowest /healthz answer during five previews of the worst template', max: 200, unit: 'ms' },
} satisfies Record<string, Target>;

const format = (value: number, unit: string) =>
  unit === 'rows/s' ? `${Math.round(value).toLocaleString('en')} rows/s` : unit === '×' ? `${value.toFixed(2)}×` : `${value.toFixed(unit === 's' ? 2 : 0)} ${unit}`;

/** `name: figure (target ≥ x: met)`, one line per figure. */
export function beside(target: Target, value: number): string {
  const met = (target.min === undefined || value >= target.min) && (target.max === undefined || value <= target.max);
  const bound = target.min !== undefined ? `≥ ${format(target.min, target.unit)}` : `≤ ${format(target.max!, target.unit)}`;
  return `${target.name}: ${format(value, target.unit)} (target ${bound}: ${met ? 'met' : 'MISSED'})`;
}
