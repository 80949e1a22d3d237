import type { Request, Response } from 'express';
import Papa from 'papaparse';
import { ctxOf } from '../http/context';
import type { Services } from '../services';
import type { EngagedPerson, EngagementOwner, PeopleKind } from '../services/campaigns/engagement';
import { PEOPLE_KINDS } from '../services/campaigns/engagement';
import type { OpenBucket } from '../services/campaigns/send-insights';
import { pagerOf, pagingOf } from './paging';
import type { WebRoutes } from './routes';
import type { Views } from './views';

/** The counts a send or an automation has, whatever their names in its record. */
export interface EngagementCounts {
  delivered: number;
  uniqueOpens: number;
  totalOpens: number;
  humanOpens: number;
  uniqueClicks: number;
  totalClicks: number;
  unsubscribes: number;
  bounces: number;
}

/** A share of delivered messages as "12.5%" (a dash before anything was delivered). */
function percent(count: number, delivered: number): string {
  return delivered > 0 ? `${((100 * count) / delivered).toFixed(1)}%` : '—';
}

/** "1 click", "1,204 clicks". */
function count(n: number, one: string, many: string): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}

/** The rates the send and automation pages show: each as a share of delivered messages. */
export function ratesOf(c: EngagementCounts) {
  return [
    { label: 'Open rate', rate: percent(c.uniqueOpens, c.delivered), note: `${count(c.uniqueOpens, 'unique open', 'unique opens')}, ${c.totalOpens.toLocaleString('en-US')} in all` },
    { label: 'Opens (excluding automated)', rate: percent(c.humanOpens, c.delivered), note: `${count(c.humanOpens, 'person', 'people')} opened; mail privacy proxies and scanners left out` },
    { label: 'Click rate', rate: percent(c.uniqueClicks, c.delivered), note: `${count(c.uniqueClicks, 'person', 'people')} clicked, ${count(c.totalClicks, 'click', 'clicks')} in all` },
    { label: 'Unsubscribe rate', rate: percent(c.unsubscribes, c.delivered), note: `${count(c.unsubscribes, 'person', 'people')} unsubscribed` },
    { label: 'Bounce rate', rate: percent(c.bounces, c.delivered), note: `${count(c.bounces, 'message', 'messages')} refused by the receiving server` },
  ];
}

/** A chart's columns from time buckets (the view labels them in the account's time zone). */
export function chartOf({ unit, buckets }: { unit: 'hour' | 'day'; buckets: OpenBucket[] }) {
  return { unit, columns: buckets.map((b) => ({ at: `${b.start}:00:00Z`, value: b.opens })) };
}

/**
 * What the engagement part of a send or automation page shows, in three or four queries
 * (opens over time only when the page does not draw them already).
 */
export async function engagementOf(
  services: Services,
  req: Request,
  owner: EngagementOwner,
  counts: Omit<EngagementCounts, 'humanOpens'>,
  options: { opens: boolean },
) {
  const ctx = ctxOf(req);
  const { engagement } = services;
  const [summary, links, opens, clicks] = await Promise.all([
    engagement.summary(ctx, owner),
    engagement.links(ctx, owner),
    options.opens ? engagement.opensOverTime(ctx, owner) : undefined,
    engagement.clicksOverTime(ctx, owner),
  ]);
  return {
    rates: ratesOf({ ...counts, humanOpens: summary.humanOpens }),
    links,
    opens: opens && chartOf(opens),
    clicks: chartOf(clicks),
  };
}

const KIND_TITLES: Record<PeopleKind, string> = { opened: 'Who opened', clicked: 'Who clicked' };

function kindOf(req: Request): PeopleKind {
  return PEOPLE_KINDS.includes(req.query.kind as PeopleKind) ? (req.query.kind as PeopleKind) : 'opened';
}

/**
 * Who opened or clicked a send or an automation: a page at a time, and the whole list as a
 * CSV download streamed in chunks (memory holds one chunk whatever the send's size).
 */
export function mountEngagement(routes: WebRoutes, services: Services, views: Views): void {
  const { singleSends, automations, engagement } = services;

  const owners = {
    'single-sends': async (req: Request) => {
      const send = await singleSends.get(ctxOf(req), String(req.params.utr));
      return { owner: { singleSendId: send.id }, name: send.single_send_name, utr: send.utr };
    },
    automations: async (req: Request) => {
      const automation = await automations.get(ctxOf(req), String(req.params.utr));
      return { owner: { automationId: automation.id }, name: automation.automation_name, utr: automation.utr };
    },
  } as const;

  for (const [base, find] of Object.entries(owners)) {
    routes.get(`/${base}/:utr/people`, async (req, res) => {
      const { owner, name, utr } = await find(req);
      const kind = kindOf(req);
      const result = await engagement.people(ctxOf(req), owner, kind, pagingOf(req));
      views.page(req, res, 'engagement/people.njk', {
        title: `${KIND_TITLES[kind]}: ${name}`,
        heading: KIND_TITLES[kind],
        name,
        kind,
        back: `/${base}/${utr}`,
        base: `/${base}/${utr}/people`,
        people: result.rows,
        pager: pagerOf(req, result, `/${base}/${utr}/people`),
      });
    });

    routes.download(`/${base}/:utr/people.csv`, async (req, res) => {
      const { owner, utr } = await find(req);
      const kind = kindOf(req);
      await sendCsv(res, `${kind}-${utr}.csv`, engagement.allPeople(ctxOf(req), owner, kind));
    });
  }
}

const CSV_COLUMNS = ['email', 'opened_at', 'automated_only', 'clicked_at', 'clicks'] as const;

/** Writes the rows as CSV while they are read, waiting for the socket between chunks. */
async function sendCsv(res: Response, fileName: string, chunks: AsyncIterable<EngagedPerson[]>): Promise<void> {
  res.status(200).attachment(fileName).type('text/csv; charset=utf-8');
  let wake: (() => void) | undefined;
  let closed = false;
  res.on('drain', () => wake?.());
  res.on('close', () => {
    closed = true;
    wake?.();
  });
  res.write(Papa.unparse([CSV_COLUMNS as unknown as string[]]) + '\r\n');
  for await (const rows of chunks) {
    const text = Papa.unparse(
      rows.map((p) => [p.email, p.opened_at ?? '', p.automated_only ? 'yes' : 'no', p.clicked_at ?? '', String(p.clicks)]),
      { escapeFormulae: true },
    );
    if (!res.write(text + '\r\n') && !closed) await new Promise<void>((resolve) => (wake = resolve));
    if (closed) return;
  }
  res.end();
}
