import type { Request, Response } from 'express';
import { ctxOf } from '../http/context';
import { recipientRules, segmentRules } from '../http/inputs/segments';
import { ValidationError } from '../lib/errors';
import { FIELD_LABELS, SEGMENT_ENGAGEMENT } from '../lib/constants';
import { bulkIds, toId } from '../lib/http';
import { validate } from '../http/validation';
import type { Services } from '../services';
import { customFieldDefs } from '../services/audience/custom-field-values';
import { onInvalid } from './errors';
import { counted } from './forms';
import { pagerOf, pagingOf } from './paging';
import type { WebRoutes } from './routes';
import { builderScriptData, conditionsOf, conditionsOfSegment, describeRules, edited, fieldChoices, presentConditions, segmentInputOf, VALUE_SHAPES } from './segment-builder';
import type { Views } from './views';
import { plainErrors } from './plain-messages';

const LIST = { 'segment-list': 'segments/macros.njk#list' } as const;
const RECIPIENTS = { 'segment-recipient-list': 'segments/macros.njk#recipients' } as const;

/** Segments: a condition builder with a live count, the recipients, manual adds and deletes; the service of `/segment/*`. */
export function mountSegments(routes: WebRoutes, services: Services, views: Views): void {
  const { segments, contactTypes, fields } = services;
  const idOf = (req: Request) => toId(req.params.id) ?? 0;

  /** The builder's choices and the conditions to show (from the request, else `fallback`). */
  const builder = async (req: Request, fallback: ReturnType<typeof conditionsOf> = []) => {
    const ctx = ctxOf(req);
    const [types, defs, sends] = await Promise.all([contactTypes.list(ctx), customFieldDefs(fields, ctx), segments.sendChoices(ctx)]);
    const choices = fieldChoices(defs);
    const sent = conditionsOf(req.body ?? {});
    return {
      types: [{ value: '', label: 'Choose a contact type' }, ...types.rows.map((t) => ({ value: t.id, label: t.name }))],
      choices,
      sends,
      shapes: VALUE_SHAPES,
      script: builderScriptData(),
      conditions: presentConditions(req.method === 'POST' ? sent : fallback, choices),
    };
  };
  const newForm = async (req: Request) => ({ title: 'New segment', action: '/segments/new', ...(await builder(req)) });
  const editForm = async (req: Request) => {
    const segment = await segments.get(ctxOf(req), idOf(req));
    return { title: `Edit ${segment.segment_name}`, action: `/segments/${segment.id}/edit`, segment, ...(await builder(req, conditionsOfSegment(segment))) };
  };
  const formValues = (segment: { segment_name: string; contact_type_id: number; query_type: string | null }) => ({
    segment_name: segment.segment_name,
    contact_type_id: segment.contact_type_id,
    query_type: segment.query_type ?? 'and',
  });

  const listPage = async (req: Request, res: Response) => {
    const ctx = ctxOf(req);
    const [result, types] = await Promise.all([segments.list(ctx, pagingOf(req)), contactTypes.list(ctx)]);
    // Custom fields' labels are read only when a condition on the page names one, so a list without costs no extra round trip.
    const custom = result.rows.some((s) => s.select_field.some((name) => !(name in FIELD_LABELS) && name !== SEGMENT_ENGAGEMENT.field));
    const choices = fieldChoices(custom ? await customFieldDefs(fields, ctx) : []);
    const typeNames = new Map(types.rows.map((t) => [t.id, t.name]));
    // Engagement conditions name their send by its name; the sends are read only when one does.
    const sends = result.rows.some((s) => s.select_field.includes('engagement')) ? await segments.sendChoices(ctx) : [];
    const sendNames = new Map(sends.map((s) => [s.utr, s.name]));
    const rows = result.rows.map((s) => ({ ...s, typeName: typeNames.get(s.contact_type_id) ?? '', summary: describeRules(s, sendNames, choices) }));
    views.page(req, res, 'segments/index.njk', { title: 'Segments', segments: rows, pager: pagerOf(req, result, '/segments') }, { fragments: LIST });
  };
  const recipientsData = async (req: Request) => {
    const ctx = ctxOf(req);
    // Recipients first: a segment on relative dates or engagement is brought up to date as it is read.
    const result = await segments.recipientsPage(ctx, idOf(req), pagingOf(req));
    const segment = await segments.get(ctx, idOf(req));
    const [sends, defs] = await Promise.all([segment.select_field.includes('engagement') ? segments.sendChoices(ctx) : [], customFieldDefs(fields, ctx)]);
    return { title: segment.segment_name, segment, summary: describeRules(segment, new Map(sends.map((s) => [s.utr, s.name])), fieldChoices(defs)), rows: result.rows, pager: pagerOf(req, result, `/segments/${segment.id}`) };
  };
  const recipientsPage = async (req: Request, res: Response) =>
    views.page(req, res, 'segments/show.njk', await recipientsData(req), { fragments: RECIPIENTS });

  routes.get('/segments', listPage);

  routes.get('/segments/new', async (req, res) => {
    views.page(req, res, 'segments/form.njk', { ...(await newForm(req)), values: { query_type: 'and', contact_type_id: toId(req.query.contact_type_id) } });
  });

  routes.post('/segments/new', onInvalid('segments/form.njk', newForm), validate(...segmentRules()), async (req, res) => {
    const id = await segments.save(ctxOf(req), segmentInputOf(req.body, conditionsOf(req.body)));
    views.redirect(res, `/segments/${id}`, 'Segment saved; its matching contacts are its recipients.');
  });

  // The conditions again after a field or operator changed, or one was added or removed.
  routes.get('/segments/builder', async (req, res) => {
    const data = await builder(req);
    const conditions = presentConditions(edited(conditionsOf(req.query), req.query, data.choices), data.choices);
    // Keyboard users stay where they were: an added row's field takes the focus, a removed
    // row gives it to "Add condition" (a changed select keeps it by its id, which htmx restores).
    const focus = req.query.add !== undefined ? conditions.length - 1 : req.query.remove !== undefined ? 'add' : null;
    views.fragment(res, 'segments/macros.njk#builder', { ...data, conditions, focus });
  });

  // How many contacts the conditions match now, counted by the service's own SQL.
  routes.get('/segments/count', async (req, res) => {
    try {
      const count = await segments.count(ctxOf(req), segmentInputOf(req.query, conditionsOf(req.query)));
      views.fragment(res, 'segments/macros.njk#count', { count });
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      views.fragment(res, 'segments/macros.njk#count', { problems: Object.values(plainErrors(err.fields)).flat() });
    }
  });

  routes.get('/segments/:id', recipientsPage);

  routes.get('/segments/:id/edit', async (req, res) => {
    const form = await editForm(req);
    views.page(req, res, 'segments/form.njk', { ...form, values: formValues(form.segment) });
  });

  routes.post('/segments/:id/edit', onInvalid('segments/form.njk', editForm), validate(...segmentRules()), async (req, res) => {
    await segments.update(ctxOf(req), idOf(req), segmentInputOf(req.body, conditionsOf(req.body)));
    views.redirect(res, `/segments/${idOf(req)}`, 'Segment saved; its recipients follow the new conditions.');
  });

  routes.post('/segments/:id/delete', async (req, res) => {
    await segments.remove(ctxOf(req), idOf(req));
    await views.changed(req, res, '/segments', 'Segment deleted.', () => listPage(req, res));
  });

  routes.post('/segments/:id/recipients', onInvalid('segments/show.njk', recipientsData), validate(...recipientRules()), async (req, res) => {
    const { first_name: firstName, last_name: lastName, email } = req.body as Record<string, string>;
    await segments.get(ctxOf(req), idOf(req));
    await segments.storeRecipient(ctxOf(req), { segment_id: idOf(req), first_name: firstName, last_name: lastName, email });
    views.redirect(res, `/segments/${idOf(req)}`, `${email.trim()} added to the segment.`);
  });

  routes.post('/segments/:id/recipients/delete', async (req, res) => {
    const ids = bulkIds(req.body.ids, 'ids');
    // The segment is looked up first, so another account's segment is a 404 like everywhere else.
    await segments.get(ctxOf(req), idOf(req));
    await segments.removeRecipients(ctxOf(req), ids);
    await views.changed(req, res, `/segments/${idOf(req)}`, counted(ids.length, 'Recipient', 'recipients', 'removed'), () => recipientsPage(req, res));
  });
}
