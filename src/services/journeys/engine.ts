import type { Knex } from 'knex';
import { parseJson, rowsPerInsert } from '../../db/dialect';
import type { SqlFragment } from '../../db/expressions';
import { skipLocked } from '../../db/locking';
import { ENROLMENT_STATE } from '../../lib/constants';
import { queueAutomationStep } from '../delivery/ledger';
import type { EmailEvent, JourneyGraph, JourneyNode } from './graph';
import { compileCondition, delayEnd, emailEvent, inSegment, matches, Position, postToWebhook, setField, splitBranch, WebhookSource, webhookSource } from './node-actions';
import type { RuleSource } from './rule-source';

/**
 * Moves the contacts of a live journey on (docs/journeys.md, "How contacts move"). Each
 * enrolment stores where it stands (version, node, due time); a contact's moves of a pass are
 * one transaction that locks the enrolment, does what each node does (an email node queues its
 * ledger row, a set_field node writes the contact) and stores the new position, so after a
 * crash a node has either run with its move or not at all. Nothing waits in memory: delays and
 * waits are due times in the database, and an open or click wakes its waiters (`wakeWaiters`).
 */

/** How often a wait for a segment looks again: joining a segment announces nothing to a contact's enrolment. */
const SEGMENT_RECHECK_MS = 15 * 60_000;
/** Moves of one contact in one pass; a graph without spinning loops needs at most one per node. */
const MOVES_PER_PASS = 250;
/** Enrolments read per batch of a pass. */
const BATCH = 500;
/** Contacts moved in one transaction: fewer commits, each still all-or-nothing for its contacts. */
const PER_TRANSACTION = 100;

export interface JourneyAutomation {
  id: number;
  user_id: number;
}


/** What a node decided: go on (by which exit), or stay until a time. */
type Step = { outcome: string; next: string | undefined; hookEventId?: string } | { stay: Date; waitsFor: string; timeoutAt: Date | null };

const ms = (value: unknown) => new Date(value as string).getTime();
const emptyGraph = (): JourneyGraph => ({ start: '', nodes: {} });

/** The latest version of an automation's journey, or undefined when it has none. */
export async function latestVersion(db: Knex | Knex.Transaction, automationId: number): Promise<{ id: number; version: number; graph: JourneyGraph } | undefined> {
  const row = await db('journey_versions').where({ automation_id: automationId }).orderBy('version', 'desc').first('id', 'version', 'graph');
  return row ? { id: Number(row.id), version: Number(row.version), graph: parseJson<JourneyGraph>(row.graph, emptyGraph()) } : undefined;
}

/**
 * New entrants of a journey automation start at the latest version's start node, now. Runs in
 * the automation pass's transaction, after enrolment; contacts who were on the chain of steps
 * before the journey was saved keep it.
 */
export async function enterJourney(trx: Knex.Transaction, automationId: number, version: { id: number; graph: JourneyGraph }, at: string): Promise<void> {
  await trx('automation_enrolments')
    .where({ automation_id: automationId, state: ENROLMENT_STATE.active })
    .whereNull('journey_version_id')
    .whereNull('last_schedule_id')
    .update({ journey_version_id: version.id, node_id: version.graph.start, node_entered_at: at, waits_for: null, timeout_at: null, next_due_at: at, updated_at: at });
}

/** What one pass reads once: the versions' graphs and the automation's steps. */
interface Pass {
  now: Date;
  at: string;
  rules: RuleSource;
  graphs: Map<number, JourneyGraph>;
  steps?: Map<string, number>;
  /** What each webhook node posts with, by version and node: the same for every contact of the pass. */
  webhooks: Map<string, WebhookSource>;
  /** Each condition node's field rule, compiled once a pass. */
  conditions: Map<string, SqlFragment>;
}

/** Moves every due contact of the automation as far as it goes now; answers the messages queued. */
export async function advanceJourney(db: Knex, automation: JourneyAutomation, now: Date, rules: RuleSource): Promise<number> {
  const pass: Pass = { now, at: now.toISOString(), rules, graphs: new Map(), webhooks: new Map(), conditions: new Map() };
  let queued = 0;
  let lastId = 0;
  for (;;) {
    const due: number[] = (await db('automation_enrolments')
      .where({ automation_id: automation.id, state: ENROLMENT_STATE.active })
      .whereNotNull('journey_version_id')
      .whereNotNull('node_id')
      .where('next_due_at', '<=', pass.at)
      .where('id', '>', lastId)
      .orderBy('id')
      .limit(BATCH)
      .pluck('id')).map(Number);
    for (let i = 0; i < due.length; i += PER_TRANSACTION) {
      queued += await db.transaction((trx) => moveContacts(trx, automation.id, due.slice(i, i + PER_TRANSACTION), pass));
    }
    if (due.length < BATCH) return queued;
    lastId = due[due.length - 1];
  }
}

/**
 * Moves the listed contacts, each up to its next wait, in the caller's transaction. The rows
 * are locked first; one another worker holds, or that moved on since it was listed, is skipped.
 */
async function moveContacts(trx: Knex.Transaction, automationId: number, ids: number[], pass: Pass): Promise<number> {
  const rows: Position[] = await skipLocked(
    trx,
    trx('automation_enrolments').whereIn('id', ids).where({ state: ENROLMENT_STATE.active }).whereNotNull('node_id').where('next_due_at', '<=', pass.at).orderBy('id').select('*'),
  );
  if (!rows.length) return 0;
  pass.steps ??= new Map((await trx('automation_schedules').where({ automation_id: automationId }).select('utr', 'id')).map((r) => [String(r.utr), Number(r.id)]));
  for (const id of new Set(rows.map((r) => Number(r.journey_version_id)))) {
    if (pass.graphs.has(id)) continue;
    const row = await trx('journey_versions').where({ id }).first('graph');
    pass.graphs.set(id, parseJson<JourneyGraph>(row?.graph, emptyGraph()));
  }
  const visits: VisitRow[] = [];
  for (const row of rows) await moveContact(trx, row, pass, visits);
  // The visits are written together, in the same transaction; each email node's visit then gets its ledger row.
  const mails = new Map<number, number[]>();
  const chunk = rowsPerInsert(trx, 7);
  for (let i = 0; i < visits.length; i += chunk) {
    const slice = visits.slice(i, i + chunk);
    const inserted: { id: unknown; node_id: string; version_id: unknown; outcome: string }[] = await trx('journey_visits').insert(slice).returning(['id', 'node_id', 'version_id', 'outcome']);
    for (const visit of inserted) {
      const scheduleId = emailStep(pass, Number(visit.version_id), visit.node_id);
      if (scheduleId === undefined || visit.outcome !== 'done') continue;
      mails.set(scheduleId, [...(mails.get(scheduleId) ?? []), Number(visit.id)]);
    }
  }
  let queued = 0;
  for (const [scheduleId, ids] of mails) {
    for (let i = 0; i < ids.length; i += 500) {
      const query = trx('journey_visits as v').join('automation_enrolments as e', 'e.id', 'v.enrolment_id').whereIn('v.id', ids.slice(i, i + 500));
      queued += await queueAutomationStep(trx, automationId, scheduleId, query, { enrolments: 'e', visits: 'v' }, pass.at);
    }
  }
  return queued;
}

/** The step an email node of a version sends, undefined for another node or a step deleted since. */
function emailStep(pass: Pass, versionId: number, nodeId: string): number | undefined {
  const node = pass.graphs.get(versionId)?.nodes[nodeId];
  return node?.type === 'email' ? pass.steps!.get(node.schedule_utr) : undefined;
}

interface VisitRow {
  enrolment_id: number;
  version_id: number;
  node_id: string;
  outcome: string;
  entered_at: string;
  left_at: string;
  hook_event_id: string | null;
}

/** Moves one contact node by node until it must wait or its journey ends; stores where it stands. */
async function moveContact(trx: Knex.Transaction, row: Position, pass: Pass, visits: VisitRow[]): Promise<void> {
  const graph = pass.graphs.get(Number(row.journey_version_id))!;
  let nodeId: string | undefined = row.node_id;
  let enteredAt = row.node_entered_at ? new Date(row.node_entered_at as string).toISOString() : pass.at;
  for (let moves = 0; nodeId !== undefined && moves < MOVES_PER_PASS; moves += 1) {
    const node: JourneyNode | undefined = graph.nodes[nodeId];
    // A node missing from its version cannot happen to a checked graph; the contact's journey ends there.
    const step: Step = node ? await stepOf({ trx, row: { ...row, node_id: nodeId }, node, pass }) : { outcome: 'done', next: undefined };
    if ('stay' in step) {
      await trx('automation_enrolments').where({ id: row.id }).update({
        node_id: nodeId,
        node_entered_at: enteredAt,
        waits_for: step.waitsFor,
        timeout_at: step.timeoutAt?.toISOString() ?? null,
        next_due_at: step.stay.toISOString(),
        updated_at: pass.at,
      });
      return;
    }
    // An email whose step was deleted since is counted as failed; the contact goes on.
    const outcome = node?.type === 'email' && emailStep(pass, row.journey_version_id, nodeId) === undefined ? 'failed' : step.outcome;
    visits.push({ enrolment_id: row.id, version_id: row.journey_version_id, node_id: nodeId, outcome, entered_at: enteredAt, left_at: pass.at, hook_event_id: step.hookEventId ?? null });
    nodeId = step.next;
    enteredAt = pass.at;
    // The next node is a fresh arrival: nothing armed yet.
    row = { ...row, waits_for: null, timeout_at: null };
  }
  // Ended, or still due (a pass's moves ran out): the next pass goes on.
  await trx('automation_enrolments').where({ id: row.id }).update({
    node_id: nodeId ?? null,
    node_entered_at: nodeId === undefined ? null : enteredAt,
    waits_for: null,
    timeout_at: null,
    next_due_at: nodeId === undefined ? null : pass.at,
    updated_at: pass.at,
  });
}

interface StepContext {
  trx: Knex.Transaction;
  row: Position;
  node: JourneyNode;
  pass: Pass;
}

/** What the node does with the contact now. A node that holds contacts arms itself on arrival (`waits_for` empty). */
async function stepOf({ trx, row, node, pass }: StepContext): Promise<Step> {
  const { now, rules } = pass;
  const arrived = row.waits_for === null;
  switch (node.type) {
    case 'email':
      return { outcome: 'done', next: node.next };
    case 'exit':
      return { outcome: 'done', next: undefined };
    case 'delay':
      if (arrived) return { stay: await delayEnd(trx, row, node, now), waitsFor: 'delay', timeoutAt: null };
      return { outcome: 'done', next: node.next };
    case 'wait_until': {
      const timeoutAt = arrived ? new Date(now.getTime() + node.timeout_minutes * 60_000) : new Date(ms(row.timeout_at));
      const happened = node.event === 'in_segment' ? await inSegment(trx, row, node.segment_id) : await emailEvent(trx, row.id, node.node, node.event);
      if (happened) return { outcome: 'yes', next: node.yes };
      if (now.getTime() >= timeoutAt.getTime()) return { outcome: 'no', next: node.no };
      if (node.event === 'in_segment') {
        return { stay: new Date(Math.min(timeoutAt.getTime(), now.getTime() + SEGMENT_RECHECK_MS)), waitsFor: 'in_segment', timeoutAt };
      }
      // Woken by the open or click itself (wakeWaiters), else at the timeout.
      return { stay: timeoutAt, waitsFor: `${node.event}:${node.node}`, timeoutAt };
    }
    case 'condition': {
      const rule = node.rule;
      let yes: boolean;
      if ('event' in rule) yes = await emailEvent(trx, row.id, rule.node, rule.event);
      else {
        const key = `${row.journey_version_id}:${row.node_id}`;
        let where = pass.conditions.get(key);
        if (!where) pass.conditions.set(key, (where = await compileCondition(trx, row.user_id, rule, now, rules)));
        yes = await matches(trx, row, where);
      }
      return yes ? { outcome: 'yes', next: node.yes } : { outcome: 'no', next: node.no };
    }
    case 'split': {
      const branch = splitBranch(row.automation_id, row.node_id, row.email_key, node.branches.map((b) => b.percent));
      return { outcome: `b${branch}`, next: node.branches[branch].next };
    }
    case 'set_field':
      await setField(trx, row, node.field, node.value, now);
      return { outcome: 'done', next: node.next };
    case 'webhook': {
      const key = `${row.journey_version_id}:${row.node_id}`;
      let source = pass.webhooks.get(key);
      if (!source) pass.webhooks.set(key, (source = await webhookSource(trx, row, node.url)));
      const event = await postToWebhook(trx, row, source, pass.at);
      // The contact goes on at once; the request goes out (and is retried) from the outbox.
      return event ? { outcome: 'done', next: node.next, hookEventId: event } : { outcome: 'failed', next: node.next };
    }
  }
}

/**
 * Called in the transaction that records a message's first human open or first click: the
 * contact waiting at a wait_until for that email node is due now, so it moves on the next pass.
 */
export async function wakeWaiters(trx: Knex.Transaction, message: { journey_visit_id?: unknown }, event: EmailEvent, at: string): Promise<void> {
  if (message.journey_visit_id === null || message.journey_visit_id === undefined) return;
  const visit = await trx('journey_visits').where({ id: Number(message.journey_visit_id) }).first('enrolment_id', 'node_id');
  if (!visit) return;
  const waits = event === 'clicked' ? [`clicked:${visit.node_id}`, `opened:${visit.node_id}`] : [`opened:${visit.node_id}`];
  await trx('automation_enrolments')
    .where({ id: visit.enrolment_id, state: ENROLMENT_STATE.active })
    .whereIn('waits_for', waits)
    .update({ next_due_at: at, updated_at: at });
}
