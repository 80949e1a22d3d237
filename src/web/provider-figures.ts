import type { Services } from '../services';
import { providerLabel, type ProviderDayRecord, type ProviderFiguresRecord, type SlowedProvider } from '../services/delivery/providers';
import { formatDateTime } from './views';

/** One provider's row of the table, with its rates over delivered and whether a line was crossed. */
export interface ProviderRow extends ProviderFiguresRecord {
  label: string;
  rates: { opened: number; clicked: number; bounced: number; complained: number };
  crossed: { complaints: boolean; bounces: boolean };
}

const share = (part: number, whole: number) => (whole > 0 ? Math.round((1000 * part) / whole) / 10 : 0);

/**
 * What the per-provider panel of a send's report or a domain's page shows: the table's rows,
 * the chart's bars, and the providers slowed down now in plain words.
 */
export async function providerPanel(services: Services, figures: ProviderFiguresRecord[], timeZone: string, now = new Date()) {
  const { providerFigures } = services;
  const rows: ProviderRow[] = figures.map((f) => ({
    ...f,
    label: providerLabel(f.provider),
    rates: { opened: share(f.opened, f.delivered), clicked: share(f.clicked, f.delivered), bounced: share(f.bounced, f.delivered), complained: share(f.complained, f.delivered) },
    crossed: providerFigures.crossed(f),
  }));
  const today = formatDateTime(now.toISOString(), timeZone).slice(0, 10);
  const slowed = (await providerFigures.slowed()).map((s: SlowedProvider) => {
    const at = formatDateTime(s.since, timeZone);
    return { label: providerLabel(s.provider), since: at.startsWith(today) ? at.slice(11) : at };
  });
  const sent = rows.reduce((sum, r) => sum + r.sent, 0);
  return { rows, slowed, sent, bars: rows.map((r) => ({ label: r.label, value: r.delivered, kind: r.crossed.complaints || r.crossed.bounces ? 'danger' : 'accent' })) };
}

/** A sending domain's days summed per provider (deferral codes merged, most frequent first). */
export function sumDays(days: ProviderDayRecord[]): ProviderFiguresRecord[] {
  const sums = new Map<string, ProviderFiguresRecord>();
  for (const { day: _day, ...figures } of days) {
    const sum = sums.get(figures.provider);
    if (!sum) {
      sums.set(figures.provider, { ...figures, top_deferrals: figures.top_deferrals.map((d) => ({ ...d })) });
      continue;
    }
    for (const name of ['sent', 'delivered', 'deferred', 'bounced', 'complained', 'opened', 'clicked'] as const) sum[name] += figures[name];
    for (const d of figures.top_deferrals) {
      const same = sum.top_deferrals.find((x) => x.code === d.code && x.text === d.text);
      if (same) same.count += d.count;
      else sum.top_deferrals.push({ ...d });
    }
    sum.top_deferrals.sort((a, b) => b.count - a.count);
  }
  return [...sums.values()];
}
