import fs from 'node:fs';
import type { Request, Response } from 'express';
import type { Config } from '../config';
import { ctxOf } from '../http/context';
import { csvUploadParser, thenRemoveUpload } from '../http/upload';
import { SEGMENT_OPERATORS } from '../lib/constants';
import { ValidationError } from '../lib/errors';
import type { Services } from '../services';
import { graphEdits, NODE_TYPES, SETTABLE_RESERVED, type JourneyGraph, type JourneyNode } from '../services/journeys';
import { errorsByNode, flowOf, FlowCounts, KIND } from './journey-flow';
import type { WebRoutes } from './routes';
import type { Views } from './views';

const EDITOR = { 'journey-editor': 'journeys/macros.njk#editor' } as const;
/** What the dashboard offers to add. */
const ADDABLE: readonly JourneyNode['type'][] = NODE_TYPES;
const OPERATORS = [...new Set(Object.values(SEGMENT_OPERATORS).flat())];
const parse = (text: unknown): JourneyGraph | undefined => {
  try {
    const value = JSON.parse(String(text ?? ''));
    return value && typeof value === 'object' && typeof value.nodes === 'object' ? (value as JourneyGraph) : undefined;
  } catch {
    return undefined;
  }
};
const whole = (v: unknown, fallback: number) => (/^\d+$/.test(String(v ?? '').trim()) ? Number(String(v).trim()) : fallback);
/** A wait's timeout in the largest whole unit, for its form. */
const timeoutOf = (minutes: number) => (minutes % 1440 === 0 ? { amount: minutes / 1440, unit: 'days' } : minutes % 60 === 0 ? { amount: minutes / 60, unit: 'hours' } : { amount: minutes, unit: 'minutes' });
const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : v === undefined || v === '' ? [] : [String(v)]);

/** The side panel's fields (`n_…`) as a node of `type` (plain words in the form, the graph's JSON here). */
export function nodeFromForm(type: JourneyNode['type'], body: Record<string, unknown>): JourneyNode {
  const minutesOf = (amount: unknown, unit: unknown) => whole(amount, 1) * ({ minutes: 1, hours: 60, days: 1440 } as Record<string, number>)[String(unit)] || whole(amount, 1) * 60;
  switch (type) {
    case 'email':
      return { type, schedule_utr: String(body.n_step ?? '') };
    case 'delay':
      if (body.n_mode === 'until') return { type, until: String(body.n_until ?? '09:00'), weekdays: list(body.n_weekdays).map(Number) };
      return { type, [['minutes', 'hours', 'days'].includes(String(body.n_unit)) ? String(body.n_unit) : 'days']: whole(body.n_amount, 1) } as JourneyNode;
    case 'wait_until':
      if (body.n_event === 'in_segment') return { type, event: 'in_segment', segment_id: whole(body.n_segment, 0), timeout_minutes: minutesOf(body.n_amount, body.n_unit) };
      return { type, event: body.n_event === 'clicked' ? 'clicked' : 'opened', node: String(body.n_email ?? ''), timeout_minutes: minutesOf(body.n_amount, body.n_unit) };
    case 'condition':
      if (body.n_check === 'opened' || body.n_check === 'clicked') return { type, rule: { event: body.n_check, node: String(body.n_email ?? '') } };
      return { type, rule: { field: String(body.n_field ?? ''), operator: String(body.n_operator ?? ''), ...(String(body.n_value ?? '') === '' ? {} : { value: String(body.n_value) }) } };
    case 'split':
      return { type, branches: [0, 1, 2, 3, 4].map((i) => String(body[`n_percent_${i}`] ?? '').trim()).filter((p) => p !== '').map((p) => ({ percent: whole(p, 0) })) };
    case 'set_field':
      return { type, field: String(body.n_field ?? ''), value: String(body.n_value ?? '') };
    case 'webhook':
      return { type, url: String(body.n_url ?? '') };
    default:
      return { type: 'exit' };
  }
}

/** The journey page of an automation: its flow drawn and edited as a draft, its versions, export and import. */
export function mountJourneys(routes: WebRoutes, services: Services, views: Views, config: Config): void {
  const { journeys, automations, automationSchedules, segments, fields } = services;
  const utrOf = (req: Request) => String(req.params.utr);
  const upload = csvUploadParser(config, { fields: 5, extensions: ['.json'] });

  interface EditorState {
    draft: JourneyGraph;
    previous?: JourneyGraph;
    panel?: { node?: string; edge?: string };
    errors?: string[];
  }

  const render = async (req: Request, res: Response, state: EditorState, status?: number) => {
    const ctx = ctxOf(req);
    const utr = utrOf(req);
    const [automation, saved, steps, segmentNames, custom] = await Promise.all([
      automations.get(ctx, utr),
      journeys.get(ctx, utr),
      automationSchedules.list(ctx, utr),
      segments.names(ctx),
      fields.listCustom(ctx),
    ]);
    const report = saved.version > 0 ? await journeys.report(ctx, utr, saved.version) : { nodes: [] };
    const counts = new Map<string, FlowCounts>(report.nodes.map((n) => [n.id, n]));
    const names = { steps: new Map(steps.map((s) => [s.utr, s.subject])), segments: new Map(segmentNames.map((s) => [s.id, s.segment_name])) };
    const { byNode, general } = errorsByNode(state.errors ?? []);
    const flow = flowOf(state.draft, names, counts, byNode, state.panel?.node);
    const node = state.panel?.node ? state.draft.nodes[state.panel.node] : undefined;
    const emailNodes = Object.entries(state.draft.nodes).filter(([, n]) => n.type === 'email').map(([id, n]) => ({ value: id, label: names.steps.get((n as { schedule_utr: string }).schedule_utr) ?? id }));
    views.page(req, res, 'journeys/page.njk', {
      title: `Journey: ${automation.automation_name}`,
      automation,
      flow,
      generalErrors: general,
      draft: JSON.stringify(state.draft),
      previous: state.previous ? JSON.stringify(state.previous) : '',
      changed: JSON.stringify(state.draft) !== JSON.stringify(saved.graph),
      panel: state.panel ? { ...state.panel, node: state.panel.node && node ? { id: state.panel.node, ...node, kind: KIND[node.type], timeout: node.type === 'wait_until' ? timeoutOf(node.timeout_minutes) : undefined } : undefined } : undefined,
      addable: ADDABLE.map((t) => ({ value: t, label: KIND[t] })),
      choices: {
        steps: steps.map((s) => ({ value: s.utr, label: s.subject })),
        emailNodes,
        segments: segmentNames.map((s) => ({ value: String(s.id), label: s.segment_name })),
        fields: [...new Set([...SETTABLE_RESERVED, ...custom.map((f) => f.field_name)])],
        operators: OPERATORS,
      },
      versions: saved.versions,
      version: saved.version,
    }, { fragments: EDITOR, status });
  };

  /** The draft and the one before it (undo), as the form carries them; the saved graph when absent. */
  const stateOf = async (req: Request): Promise<EditorState> => {
    const draft = parse(req.body?.draft) ?? (await journeys.get(ctxOf(req), utrOf(req))).graph;
    return { draft, previous: parse(req.body?.previous) };
  };
  const defaults = async (req: Request, draft: JourneyGraph) => {
    const steps = await automationSchedules.list(ctxOf(req), utrOf(req));
    return { scheduleUtr: steps[0]?.utr, emailNode: Object.keys(draft.nodes).find((id) => draft.nodes[id].type === 'email') };
  };
  const edgeOf = (value: unknown) => {
    const [from, key] = String(value ?? '').split('|');
    return { from: from ?? '', key: key || 'start' };
  };

  routes.get('/automations/:utr/journey', async (req, res) => {
    await render(req, res, { draft: (await journeys.get(ctxOf(req), utrOf(req))).graph });
  });

  routes.post('/automations/:utr/journey/open', async (req, res) => {
    await render(req, res, { ...(await stateOf(req)), panel: { node: String(req.body.node ?? '') } });
  });

  routes.post('/automations/:utr/journey/add', async (req, res) => {
    await render(req, res, { ...(await stateOf(req)), panel: { edge: String(req.body.edge ?? '|start') } });
  });

  routes.post('/automations/:utr/journey/insert', async (req, res) => {
    const state = await stateOf(req);
    const type = String(req.body.type ?? '') as JourneyNode['type'];
    if (!ADDABLE.includes(type)) return render(req, res, { ...state, panel: { edge: String(req.body.edge ?? '') } }, 422);
    const { graph, id } = graphEdits.insertNode(state.draft, edgeOf(req.body.edge), type, await defaults(req, state.draft));
    await render(req, res, { draft: graph, previous: state.draft, panel: { node: id } });
  });

  routes.post('/automations/:utr/journey/apply', async (req, res) => {
    const state = await stateOf(req);
    const id = String(req.body.node ?? '');
    const current = state.draft.nodes[id];
    if (!current) return render(req, res, state);
    const draft = graphEdits.updateNode(state.draft, id, nodeFromForm(current.type, req.body));
    await render(req, res, { draft, previous: state.draft, panel: { node: id } });
  });

  routes.post('/automations/:utr/journey/remove', async (req, res) => {
    const state = await stateOf(req);
    await render(req, res, { draft: graphEdits.removeNode(state.draft, String(req.body.node ?? '')), previous: state.draft });
  });

  routes.post('/automations/:utr/journey/undo', async (req, res) => {
    const state = await stateOf(req);
    await render(req, res, { draft: state.previous ?? state.draft });
  });

  routes.post('/automations/:utr/journey/save', async (req, res) => {
    const state = await stateOf(req);
    try {
      const version = await journeys.save(ctxOf(req), utrOf(req), state.draft);
      views.redirect(res, `/automations/${utrOf(req)}/journey`, `Journey saved as version ${version}. Contacts already in it finish on the version they entered by.`);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      await render(req, res, { ...state, errors: Object.values(err.fields).flat() }, 422);
    }
  });

  routes.download('/automations/:utr/journey/export', async (req, res) => {
    const { name, file } = await journeys.exportFile(ctxOf(req), utrOf(req));
    const safe = name.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'journey';
    res.status(200).attachment(`${safe}.journey.json`).type('application/json; charset=utf-8').send(JSON.stringify(file, null, 2));
  });

  routes.upload('/automations/journey/import', upload, async (req, res) => {
    const utr = await thenRemoveUpload(req, async () => {
      if (req.refusedFileType || !req.file) throw ValidationError.of('file', 'Choose a journey file (.json) exported from an automation.');
      return journeys.importFile(ctxOf(req), await fs.promises.readFile(req.file.path, 'utf8'));
    });
    views.redirect(res, `/automations/${utr}`, 'Journey imported as a draft automation: choose its target, group and senders, then set it live.');
  });
}
