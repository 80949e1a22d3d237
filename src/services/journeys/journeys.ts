import type { Knex } from 'knex';
import { insertId, nowValue, parseJson, toCount } from '../../db/dialect';
import { ENROLMENT_STATE, HOOK_DELIVERY_STATE } from '../../lib/constants';
import { NotFoundError, ValidationError } from '../../lib/errors';
import { timestamp } from '../../lib/time';
import { isUtr } from '../../lib/utr';
import type { Ctx, ServiceDeps } from '../context';
import { recordAudit } from '../shared/audit-writer';
import { checkGraph, exitsOf, GraphContext, JourneyGraph, JourneyNode } from './graph';
import { importJourneyFile, journeyFile, JourneyFile, readJourneyFile } from './journey-files';
import { ruleSource } from './rule-source';

export interface VersionRecord {
  version: number;
  created_at: string | null;
  created_by: string | null;
  contacts_in: number;
}

export interface JourneyRecord {
  /** 0: no journey saved; the graph is the automation's steps as a chain. */
  version: number;
  graph: JourneyGraph;
  versions: VersionRecord[];
}

export interface NodeReport {
  id: string;
  type: JourneyNode['type'];
  entered: number;
  waiting: number;
  completed: number;
  yes: number;
  no: number;
  branches: number[];
  failed: number;
}

const MINUTES = { hours: 60, days: 1440 } as const;

/** A journey's graph, its versions and their reports (docs/journeys.md); the engine is engine.ts. */
export function createJourneysService({ db }: Pick<ServiceDeps, 'db'>) {
  async function automationOf(ctx: Ctx, utr: string, q: Knex | Knex.Transaction = db): Promise<{ id: number; utr: string; automation_name: string; automation_type: number }> {
    const row = isUtr(utr) ? await q('automations').where({ user_id: ctx.userId, utr }).whereNull('deleted_at').first('id', 'utr', 'automation_name', 'automation_type') : undefined;
    if (!row) throw new NotFoundError();
    return { id: Number(row.id), utr: String(row.utr), automation_name: String(row.automation_name), automation_type: Number(row.automation_type) };
  }

  /** What a graph of the automation is checked against (read in `q`: inside a transaction, pass it). */
  async function graphContext(ctx: Ctx, automationId: number, q: Knex | Knex.Transaction = db): Promise<GraphContext> {
    const steps = await q('automation_schedules').where({ automation_id: automationId }).pluck('utr');
    const segments = await q('segments').where({ user_id: ctx.userId }).whereNull('deleted_at').pluck('id');
    const hooks = await q('webhook_endpoints').where({ user_id: ctx.userId }).pluck('url');
    const account = await ruleSource().forAccount(q, ctx.userId);
    return {
      scheduleUtrs: new Set(steps.map(String)),
      segmentIds: new Set(segments.map(Number)),
      fields: account.fields,
      countryOf: account.countryOf,
      customFields: account.customFields,
      webhookUrls: new Set(hooks.map(String)),
    };
  }

  /** Stores a checked graph as the automation's next version (or in place of one nobody entered); answers its number. */
  async function storeVersion(trx: Knex.Transaction, ctx: Ctx, automationId: number, graph: JourneyGraph, now: string): Promise<number> {
    // Two saves at once take turns on the automation's row, so version numbers do not collide.
    await trx('automations').where({ id: automationId }).update({ updated_at: now });
    const latest = await trx('journey_versions').where({ automation_id: automationId }).orderBy('version', 'desc').first('id', 'version');
    const entered = latest ? await trx('automation_enrolments').where({ journey_version_id: latest.id }).first('id') : undefined;
    if (latest && !entered) {
      await trx('journey_versions').where({ id: latest.id }).update({ graph: JSON.stringify(graph), created_at: now, created_by: ctx.actor?.name ?? null });
      return Number(latest.version);
    }
    const version = latest ? Number(latest.version) + 1 : 1;
    await insertId(trx, 'journey_versions', { automation_id: automationId, version, graph: JSON.stringify(graph), created_by: ctx.actor?.name ?? null, created_at: now });
    return version;
  }

  /** The automation's steps as a chain: email nodes in step order, a delay before each one that waits. */
  async function chainOf(automationId: number): Promise<JourneyGraph> {
    const steps = await db('automation_schedules').where({ automation_id: automationId }).orderBy('id').select('utr', 'waiting_period', 'waiting_type');
    const nodes: Record<string, JourneyNode> = {};
    const ids: string[] = [];
    steps.forEach((step, i) => {
      const period = Number(step.waiting_period) || 0;
      const type = String(step.waiting_type) as keyof typeof MINUTES | 'instantly';
      if (type !== 'instantly' && period > 0) ids.push(`wait-${i + 1}`);
      ids.push(`email-${i + 1}`);
    });
    let s = 0;
    ids.forEach((id, k) => {
      const next = ids[k + 1];
      if (id.startsWith('wait-')) {
        const step = steps[s];
        nodes[id] = { type: 'delay', [String(step.waiting_type)]: Number(step.waiting_period), ...(next ? { next } : {}) } as JourneyNode;
      } else {
        nodes[id] = { type: 'email', schedule_utr: String(steps[s].utr), ...(next ? { next } : {}) };
        s += 1;
      }
    });
    return { start: ids[0] ?? '', nodes };
  }

  async function versionsOf(automationId: number): Promise<VersionRecord[]> {
    const inside = db('automation_enrolments')
      .count('*')
      .whereRaw('automation_enrolments.journey_version_id = journey_versions.id')
      .where('automation_enrolments.state', ENROLMENT_STATE.active)
      .whereNotNull('automation_enrolments.node_id')
      .as('contacts_in');
    const rows = await db('journey_versions').where({ automation_id: automationId }).orderBy('version', 'desc').select('version', 'created_at', 'created_by', inside);
    return rows.map((r) => ({ version: Number(r.version), created_at: timestamp(r.created_at), created_by: r.created_by === null ? null : String(r.created_by), contacts_in: toCount(r.contacts_in) }));
  }

  async function versionRow(automationId: number, version?: number): Promise<{ id: number; version: number; graph: JourneyGraph } | undefined> {
    const query = db('journey_versions').where({ automation_id: automationId });
    const row = version === undefined ? await query.orderBy('version', 'desc').first() : await query.where({ version }).first();
    return row ? { id: Number(row.id), version: Number(row.version), graph: parseJson<JourneyGraph>(row.graph, { start: '', nodes: {} }) } : undefined;
  }

  return {
    /** Checks the graph against the automation and the account; throws `errors.graph` naming each node at fault. */
    async check(ctx: Ctx, utr: string, input: unknown): Promise<JourneyGraph> {
      const automation = await automationOf(ctx, utr);
      return checkGraph(input, await graphContext(ctx, automation.id));
    },

    /**
     * Saves the journey: a new version, which new entrants take while contacts already inside
     * finish on theirs. A version nobody has entered yet (a draft being built) is replaced in place.
     * Answers the version number.
     */
    async save(ctx: Ctx, utr: string, input: unknown): Promise<number> {
      const automation = await automationOf(ctx, utr);
      const graph = checkGraph(input, await graphContext(ctx, automation.id));
      const now = nowValue();
      return db.transaction(async (trx) => {
        const version = await storeVersion(trx, ctx, automation.id, graph, now);
        await recordAudit(trx, ctx, { action: 'automation.updated', recordType: 'automation', recordId: utr, summary: `${automation.automation_name}: journey version ${version}` }, now);
        return version;
      });
    },

    /** The automation's journey (or its chain) with its emails' content, as one file. */
    async exportFile(ctx: Ctx, utr: string): Promise<{ name: string; file: JourneyFile }> {
      const automation = await automationOf(ctx, utr);
      const latest = await versionRow(automation.id);
      const file = await journeyFile(db, automation, latest ?? { version: 0, graph: await chainOf(automation.id) });
      return { name: automation.automation_name, file };
    },

    /**
     * A draft automation from an exported file: its emails (from `senderId`, else the account's
     * first sender, to be chosen again), its journey as version 1; no target and no group yet.
     * Answers the new automation's utr.
     */
    async importFile(ctx: Ctx, text: string, senderId?: number): Promise<string> {
      const file = readJourneyFile(text);
      const sender = senderId === undefined
        ? await db('senders').where({ user_id: ctx.userId }).whereNull('deleted_at').orderBy('id').first('id')
        : await db('senders').where({ user_id: ctx.userId, id: senderId }).whereNull('deleted_at').first('id');
      if (!sender) throw ValidationError.of('sender_id', senderId === undefined ? 'Add a sender first: the imported emails need one.' : 'The selected sender id is invalid.');
      return db.transaction(async (trx) => {
        const made = await importJourneyFile(trx, ctx, file, Number(sender.id));
        if (file.journey) {
          const graph = checkGraph(made.graph, await graphContext(ctx, made.id, trx));
          await storeVersion(trx, ctx, made.id, graph, nowValue());
        }
        return made.utr;
      });
    },

    /** The latest version's graph with the list of versions; without a journey, the steps as a chain (version 0). */
    async get(ctx: Ctx, utr: string): Promise<JourneyRecord> {
      const automation = await automationOf(ctx, utr);
      const latest = await versionRow(automation.id);
      return { version: latest?.version ?? 0, graph: latest?.graph ?? (await chainOf(automation.id)), versions: await versionsOf(automation.id) };
    },

    /** One version's graph (the latest when none is named). */
    async version(ctx: Ctx, utr: string, version?: number): Promise<{ version: number; graph: JourneyGraph }> {
      const automation = await automationOf(ctx, utr);
      const row = await versionRow(automation.id, version);
      if (!row) {
        if (version !== undefined) throw ValidationError.of('version', 'The automation has no such journey version.');
        return { version: 0, graph: await chainOf(automation.id) };
      }
      return row;
    },

    /** Counts per node of a version (the latest when none is named): the visits that left it, and who stands at it now. */
    async report(ctx: Ctx, utr: string, version?: number): Promise<{ version: number; nodes: NodeReport[] }> {
      const automation = await automationOf(ctx, utr);
      const row = await versionRow(automation.id, version);
      if (!row) {
        if (version !== undefined) throw ValidationError.of('version', 'The automation has no such journey version.');
        return { version: 0, nodes: [] };
      }
      const passed = await db('journey_visits').where({ version_id: row.id }).groupBy('node_id', 'outcome').select('node_id', 'outcome', db.raw('count(*) as n'));
      // A webhook step's contacts went on at once; its requests that failed after their retries count as failed.
      const hooksFailed = await db('journey_visits as v')
        .join('webhook_deliveries as d', 'd.event_id', 'v.hook_event_id')
        .where({ 'v.version_id': row.id, 'd.state': HOOK_DELIVERY_STATE.failed })
        .groupBy('v.node_id')
        .select('v.node_id', db.raw('count(*) as n'));
      // Who stands at a node: waiting there, or stopped there by leaving the automation (unsubscribed, bounced, deleted).
      const standing = await db('automation_enrolments')
        .where({ journey_version_id: row.id })
        .whereNotNull('node_id')
        .groupBy('node_id', 'state')
        .select('node_id', 'state', db.raw('count(*) as n'));
      const nodes = Object.entries(row.graph.nodes).map(([id, node]): NodeReport => {
        const here = standing.filter((c) => c.node_id === id);
        const waiting = here.filter((c) => Number(c.state) === ENROLMENT_STATE.active).reduce((sum, c) => sum + toCount(c.n), 0);
        const stopped = here.reduce((sum, c) => sum + toCount(c.n), 0);
        const report: NodeReport = {
          id, type: node.type, entered: stopped, waiting, completed: 0, yes: 0, no: 0,
          branches: node.type === 'split' ? node.branches.map(() => 0) : [],
          failed: toCount(hooksFailed.find((c) => c.node_id === id)?.n),
        };
        for (const c of passed.filter((c) => c.node_id === id)) {
          const n = toCount(c.n);
          const outcome = String(c.outcome);
          report.entered += n;
          report.completed += n;
          if (outcome === 'yes') report.yes += n;
          else if (outcome === 'no') report.no += n;
          else if (outcome === 'failed') report.failed += n;
          else if (/^b\d$/.test(outcome) && report.branches.length > Number(outcome.slice(1))) report.branches[Number(outcome.slice(1))] += n;
        }
        return report;
      });
      return { version: row.version, nodes };
    },

    /** The ids each node leads to, for drawing (in graph order). */
    exitsOf,
  };
}

export type JourneysService = ReturnType<typeof createJourneysService>;
