import type { Request, RequestHandler } from 'express';
import { ctxOf } from '../http/context';
import { abTestInput, validateAbTest } from '../http/inputs/ab-tests';
import { AB_TEST_LIMITS, AB_VARIANT_FIELDS } from '../lib/constants';
import { asArray } from '../lib/http';
import { isBlank } from '../lib/validation';
import type { Services } from '../services';
import type { AbTestDetails } from '../services/campaigns/ab-tests';
import { SINGLE_SEND_EDITABLE } from '../services/shared/single-send-state';
import { onInvalid } from './errors';
import type { WebRoutes } from './routes';
import type { Views } from './views';

const LETTERS = ['A', 'B', 'C', 'D'];

/** A rate as a whole percentage of delivered messages (none delivered: no rate yet). */
const rate = (hits: number, delivered: number) => (delivered > 0 ? `${Math.round((hits / delivered) * 100)}%` : '—');

/** A send's test as its page shows it: letters for the variants, rates, the winner and when it is due. */
export function presentAbTest(test: AbTestDetails | null) {
  if (!test) return null;
  const testing = test.status === 'testing';
  // Once the winner went, the test's rows keep the figures it was decided on; the rest has its own row.
  return {
    ...test,
    metricLabel: test.winner_metric === 'clicks' ? 'click rate' : 'open rate',
    winnerLetter: test.winner === null ? null : LETTERS[test.winner],
    rest: test.rest && { ...test.rest, openRate: rate(test.rest.unique_opens, test.rest.delivered), clickRate: rate(test.rest.unique_clicks, test.rest.delivered) },
    variants: test.variants.map((live) => ({ ...live, ...(test.decided[live.index] ?? {}) })).map((v) => ({
      ...v,
      letter: LETTERS[v.index],
      openRate: rate(v.unique_opens, v.delivered),
      clickRate: rate(v.unique_clicks, v.delivered),
      winner: test.winner === v.index,
      preheader: test.saved[v.index]?.preheader ?? null,
      ownTemplate: !!test.saved[v.index]?.template_html,
    })),
    testing,
  };
}

/**
 * The A/B test of a single send: the composer (variants side by side, the share tested, the
 * metric and the wait) on a draft or scheduled send, and the winner chosen by hand while the
 * test runs. Over the same service as the API's `/single/send/ab/save` and `/ab/choose`; the
 * send's page shows the test's progress (single-sends/show.njk).
 */
export function mountAbTests(routes: WebRoutes, services: Services, views: Views): void {
  const { singleSends, abTests } = services;

  const formData = async (req: Request) => {
    const send = await singleSends.get(ctxOf(req), String(req.params.utr));
    const test = await abTests.details(send.id);
    const saved = test?.saved ?? [];
    const variants = LETTERS.map((_, i) => ({ subject: '', preheader: '', from_name: '', template_html: '', ...Object.fromEntries(Object.entries(saved[i] ?? {}).map(([k, v]) => [k, v ?? ''])) }));
    return {
      title: `A/B test of “${send.single_send_name}”`,
      send,
      letters: LETTERS,
      limits: AB_TEST_LIMITS,
      values: { variants, test_percent: test?.test_percent ?? 20, winner_metric: test?.winner_metric ?? 'opens', wait_minutes: test?.wait_minutes ?? 240 },
      saved: !!test,
      // The fields the form shows its messages beside; any other message is shown above it.
      shown: ['test_percent', 'winner_metric', 'wait_minutes', ...LETTERS.flatMap((_, i) => ['subject', 'preheader', 'from_name', 'template_html'].map((name) => `variants.${i}.${name}`))],
    };
  };

  /** Variants C and D count only when something of them is filled in; A and B always do (empty: the send as it is). */
  const filledVariants: RequestHandler = (req, _res, next) => {
    const variants = asArray(req.body.variants).map((v) => (v && typeof v === 'object' ? v : {})) as Record<string, unknown>[];
    req.body.variants = variants.filter((v, i) => i < AB_TEST_LIMITS.variantsMin || AB_VARIANT_FIELDS.some((name) => !isBlank(v[name])));
    while (req.body.variants.length < AB_TEST_LIMITS.variantsMin) req.body.variants.push({});
    req.body.utr = String(req.params.utr);
    next();
  };

  routes.get('/single-sends/:utr/ab-test', async (req, res) => {
    const data = await formData(req);
    if (!SINGLE_SEND_EDITABLE.includes(data.send.status)) return views.redirect(res, `/single-sends/${data.send.utr}`);
    views.page(req, res, 'ab-tests/form.njk', data);
  });

  routes.post('/single-sends/:utr/ab-test', onInvalid('ab-tests/form.njk', formData), filledVariants, validateAbTest(), async (req, res) => {
    const utr = String(req.params.utr);
    await abTests.save(ctxOf(req), utr, abTestInput(req.body));
    views.redirect(res, `/single-sends/${utr}`, 'A/B test saved: the variants go to the test share when the send starts.');
  });

  routes.post('/single-sends/:utr/ab-test/choose', async (req, res) => {
    const utr = String(req.params.utr);
    const variant = Number(req.body.variant);
    await abTests.choose(ctxOf(req), utr, Number.isInteger(variant) ? variant : -1);
    views.redirect(res, `/single-sends/${utr}`, `Variant ${LETTERS[variant] ?? ''} is being sent to everyone else.`);
  });
}

