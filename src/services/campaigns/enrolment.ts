import type { Knex } from 'knex';
import { insertSelect } from '../../db/insert-select';
import { skipLocked } from '../../db/locking';
import { typedParam } from '../../db/typed-param';
import { AUTOMATION_STATUS, AUTOMATION_TYPES, ENROLMENT_STATE, SenderDomainStatus } from '../../lib/constants';
import { Audience, unsubscribedOrSuppressed, withoutUnsubscribed } from '../delivery/ledger';
import { queueAutomationStep } from '../delivery/ledger';
import { membersOf } from '../delivery/ledger';
import type { Targets } from '../delivery/ledger';
import { domainStatusesOf } from '../delivery/relays';
import { transitionAutomations } from './automation-state';
import { advanceJourney, enterJourney, latestVersion, ruleSource } from '../journeys';

export interface AutomationRow {
  id: number;
  user_id: number;
  utr: string;
  automation_name: string;
  automation_type: number;
  automation_for: number | null;
  automation_for_table: string | null;
  unsubscribe_group_id: number | null;
  status: number;
  seen_status: number | null;
  first_live_at: unknown;
}

interface Schedule {
  id: number;
  waiting_period: number;
  waiting_type: string;
  /** Its sender's address (null without a sender), read with it for the domain check. */
  from_email?: string | null;
}

/** Each account's domain statuses as read once in a pass over the automations. */
type DomainStatuses = Map<number, (address: string) => SenderDomainStatus>;

/** Called inside the transaction that records the change, so the event is never lost. */
export interface AutomationHooks {
  automationLive?(automation: AutomationRow, trx: Knex.Transaction): Promise<void>;
  automationPaused?(automation: AutomationRow, trx: Knex.Transaction): Promise<void>;
  /** The worker paused a live automation: a step's From domain is not authenticated (REQUIRE_DOMAIN_AUTH). */
  automationRefusedUnauthenticated?(automation: AutomationRow, fromEmails: string[], trx: Knex.Transaction): Promise<void>;
}

export interface AutomationOptions {
  /** REQUIRE_DOMAIN_AUTH: a live automation sends only while every step's From domain is verified. */
  requireDomainAuth?: boolean;
}

/** What an automation's page says when the worker paused it for an unauthenticated domain. */
export function unauthenticatedPauseReason(fromEmails: string[]): string {
  const list = fromEmails.join(', ');
  return `Paused by the service: the domain of ${list} is not a verified sending domain of your account, and this service sends only from verified domains. Its emails wait and go out when it is set live again, once the domain is verified (or the steps use a sender whose domain is).`.slice(0, 500);
}

const HOUR = 3_600_000;

/** How long a schedule waits after the previous one (or after enrolment, for the first). */
export function waitingMs(schedule: Schedule): number {
  const period = Math.max(0, Number(schedule.waiting_period) || 0);
  if (schedule.waiting_type === 'hours') return period * HOUR;
  if (schedule.waiting_type === 'days') return period * 24 * HOUR;
  return 0;
}

/**
 * One pass over the automations, run by the worker every tick:
 * - notices go-live and pause (events); the go-live snapshot is set-live's (`recordFirstGoLive`),
 *   taken here only for an automation that went live without it (set live by an older version);
 * - while live: enrols the target's new members, lets unsubscribed or deleted contacts leave,
 *   and queues each schedule that has come due in the ledger (set-based, per schedule).
 * A paused automation does none of that, so it sends nothing; set-live picks up where it was.
 * Returns the number of messages queued.
 */
export async function runAutomations(db: Knex, now: Date, hooks: AutomationHooks = {}, options: AutomationOptions = {}): Promise<number> {
  const automations: AutomationRow[] = await db('automations as a')
    .leftJoin('automation_runs as r', 'r.automation_id', 'a.id')
    .whereNull('a.deleted_at')
    .where((q) => q.where('a.status', AUTOMATION_STATUS.live).orWhereRaw('r.seen_status <> a.status'))
    .select('a.*', 'r.seen_status', 'r.first_live_at');
  const domainStatuses: DomainStatuses = new Map();
  const rules = ruleSource();
  let queued = 0;
  for (const automation of automations) {
    const at = now.toISOString();
    const changed = automation.seen_status === null || Number(automation.seen_status) !== Number(automation.status);
    const live = Number(automation.status) === AUTOMATION_STATUS.live;
    // With a journey, its contacts move after the pass's transaction, each move in its own (journeys/engine.ts).
    let journey = false;
    queued += await db.transaction(async (trx) => {
      // Another worker busy with this automation has it this tick (no double events or steps).
      if (!(await skipLocked(db, trx('automations').where({ id: automation.id }).first('id')))) return 0;
      const schedules: Schedule[] = await trx('automation_schedules as s')
        .leftJoin('senders as f', 'f.id', 's.sender_id')
        .where('s.automation_id', automation.id)
        .orderBy('s.id')
        .select('s.id', 's.waiting_period', 's.waiting_type', 'f.from_email');
      if (changed) {
        await noticeStatus(trx, automation, schedules, at);
        if (live) await hooks.automationLive?.(automation, trx);
        else if (Number(automation.status) === AUTOMATION_STATUS.paused && automation.seen_status !== null) await hooks.automationPaused?.(automation, trx);
      }
      if (!live) return 0;
      if (options.requireDomainAuth && (await pauseUnauthenticated(trx, automation, schedules, domainStatuses, at, hooks))) return 0;
      await enrol(trx, automation, schedules, at, ENROLMENT_STATE.active);
      await leave(trx, automation, at);
      const version = await latestVersion(trx, automation.id);
      if (version) {
        journey = true;
        await enterJourney(trx, automation.id, version, at);
      } else await reschedule(trx, automation, schedules, now);
      return queueDueSteps(trx, automation, schedules, now);
    });
    if (journey) queued += await advanceJourney(db, automation, now, rules);
  }
  return queued;
}

/**
 * The rule holds while an automation is live, not only when it was set live: a step's domain may
 * have stopped being verified since (or a step added with another sender). Such an automation is
 * paused, as a pause from the dashboard does (its queued emails wait, none is dropped), with the
 * reason on its page; the pause is noticed here, so the usual pause notice does not follow it.
 */
async function pauseUnauthenticated(
  trx: Knex.Transaction,
  automation: AutomationRow,
  schedules: Schedule[],
  domainStatuses: DomainStatuses,
  at: string,
  hooks: AutomationHooks,
): Promise<boolean> {
  const senders = [...new Set(schedules.flatMap((s) => (s.from_email == null ? [] : [String(s.from_email)])))];
  if (!senders.length) return false;
  const userId = Number(automation.user_id);
  const unauthenticatedBy = (statusOf: (address: string) => SenderDomainStatus) => senders.filter((address) => statusOf(address) !== 'verified').sort();
  // The account's statuses are read once a pass; a pause is decided on a fresh read only.
  const known = domainStatuses.get(userId);
  if (known && !unauthenticatedBy(known).length) return false;
  const statusOf = await domainStatusesOf(trx, userId);
  domainStatuses.set(userId, statusOf);
  const unauthenticated = unauthenticatedBy(statusOf);
  if (!unauthenticated.length) return false;
  const reason = unauthenticatedPauseReason(unauthenticated);
  if (!(await transitionAutomations(trx('automations').where({ id: automation.id }), 'pause', { paused_reason: reason, updated_at: at }))) return false;
  await trx('automation_runs')
    .insert({ automation_id: automation.id, seen_status: AUTOMATION_STATUS.paused, first_live_at: null, updated_at: at })
    .onConflict('automation_id')
    .merge(['seen_status', 'updated_at']);
  await hooks.automationRefusedUnauthenticated?.({ ...automation, status: AUTOMATION_STATUS.paused }, unauthenticated, trx);
  return true;
}

async function noticeStatus(trx: Knex.Transaction, automation: AutomationRow, schedules: Schedule[], at: string): Promise<void> {
  if (automation.first_live_at === null && Number(automation.status) === AUTOMATION_STATUS.live) {
    await takeSnapshot(trx, automation, schedules, at, Number(automation.status));
  }
  await trx('automation_runs')
    .insert({ automation_id: automation.id, seen_status: automation.status, first_live_at: null, updated_at: at })
    .onConflict('automation_id')
    .merge(['seen_status', 'updated_at']);
}

/** What the go-live snapshot needs of an automation. */
export type GoingLive = Pick<AutomationRow, 'id' | 'user_id' | 'automation_type' | 'automation_for' | 'automation_for_table' | 'unsubscribe_group_id'>;

/**
 * The first go-live of an automation, called in the transaction that takes it live (set-live),
 * so that "joined after set-live answered" is exact: a welcome automation records its target's
 * members of that moment as skipped (only contacts who join later receive it), a custom one
 * enrols them. Later go-lives (after a pause) take no snapshot. `seenStatus` is the status the
 * automation had, so the worker still notices the change and sends the go-live notification.
 * Answers whether this was the first go-live.
 */
export async function recordFirstGoLive(trx: Knex.Transaction, automation: GoingLive, seenStatus: number, at: string): Promise<boolean> {
  const run = await trx('automation_runs').where({ automation_id: automation.id }).first('first_live_at');
  if (run && run.first_live_at !== null) return false;
  const schedules: Schedule[] = await trx('automation_schedules').where({ automation_id: automation.id }).orderBy('id').select('id', 'waiting_period', 'waiting_type');
  await takeSnapshot(trx, automation, schedules, at, seenStatus);
  return true;
}

/** Enrols (custom) or skips (welcome) the target's members and stamps the first go-live. */
async function takeSnapshot(trx: Knex.Transaction, automation: GoingLive, schedules: Schedule[], at: string, seenStatus: number): Promise<void> {
  const welcome = Number(automation.automation_type) === AUTOMATION_TYPES.welcome;
  await enrol(trx, automation, schedules, at, welcome ? ENROLMENT_STATE.skipped : ENROLMENT_STATE.active);
  await trx('automation_runs')
    .insert({ automation_id: automation.id, seen_status: seenStatus, first_live_at: at, updated_at: at })
    .onConflict('automation_id')
    .merge(['first_live_at', 'updated_at']);
}

/** The automation's target: one contact type or one segment. */
function targetOf(automation: GoingLive): Targets {
  const id = Number(automation.automation_for);
  return {
    contactTypeIds: id && automation.automation_for_table === 'contacts_' ? [id] : [],
    segmentIds: id && automation.automation_for_table === 'segments_' ? [id] : [],
  };
}

/** Adds the target's members that are not enrolled yet (active ones only if they may be written to). */
async function enrol(trx: Knex.Transaction, automation: GoingLive, schedules: Schedule[], at: string, state: number): Promise<void> {
  const joiners = membersOf(trx, Number(automation.user_id), targetOf(automation));
  if (!joiners) return;
  const active = state === ENROLMENT_STATE.active;
  const firstDue = active && schedules.length ? new Date(Date.parse(at) + waitingMs(schedules[0])).toISOString() : null;
  joiners.whereNotExists(trx('automation_enrolments as e').select(trx.raw('1')).where('e.automation_id', automation.id).whereRaw('e.email_key = t.email_key'));
  if (active) withoutUnsubscribed(joiners, trx, audienceOf(automation), 't.email_key');
  await insertSelect(trx, 'automation_enrolments', {
    user_id: typedParam(trx, automation.user_id, 'integer'),
    automation_id: typedParam(trx, automation.id, 'integer'),
    contact_id: 't.contact_id',
    segment_recipient_id: 't.segment_recipient_id',
    email: 't.email',
    email_key: 't.email_key',
    state: typedParam(trx, state, 'smallint'),
    next_due_at: typedParam(trx, firstDue, 'timestamptz'),
    enrolled_at: typedParam(trx, at, 'timestamptz'),
    updated_at: typedParam(trx, at, 'timestamptz'),
  }, joiners);
}

/** Unsubscribed (globally, from the automation's group, bounced) or deleted contacts leave. */
async function leave(trx: Knex.Transaction, automation: AutomationRow, at: string): Promise<void> {
  await trx('automation_enrolments')
    .where({ automation_id: automation.id, state: ENROLMENT_STATE.active })
    .where((q) => {
      q.where(unsubscribedOrSuppressed(trx, audienceOf(automation), 'automation_enrolments.email_key'));
      q.orWhereExists(
        trx('contacts').select(trx.raw('1')).whereRaw('contacts.id = automation_enrolments.contact_id').whereNotNull('contacts.deleted_at'),
      );
    })
    .update({ state: ENROLMENT_STATE.left, next_due_at: null, updated_at: at });
}

/** Whose do-not-mail lists an automation's messages respect: its account's and its group's. */
function audienceOf(automation: GoingLive): Audience {
  return { userId: Number(automation.user_id), groupId: automation.unsubscribe_group_id };
}

/** Enrolments that had run out of schedules get the next one when it is added later. */
async function reschedule(trx: Knex.Transaction, automation: AutomationRow, schedules: Schedule[], now: Date): Promise<void> {
  if (!schedules.length) return;
  const waiting = await trx('automation_enrolments')
    .where({ automation_id: automation.id, state: ENROLMENT_STATE.active })
    .whereNull('next_due_at')
    .where((q) => q.whereNull('last_schedule_id').orWhere('last_schedule_id', '<', schedules[schedules.length - 1].id))
    .select('id', 'last_schedule_id', 'last_step_at', 'enrolled_at');
  for (const row of waiting) {
    const next = schedules.find((s) => s.id > Number(row.last_schedule_id ?? 0))!;
    const base = new Date((row.last_step_at ?? row.enrolled_at) as string).getTime();
    await trx('automation_enrolments')
      .where({ id: row.id })
      .update({ next_due_at: new Date(base + waitingMs(next)).toISOString(), updated_at: now.toISOString() });
  }
}

/**
 * For each schedule, queues it for the enrolments whose previous step was the schedule before
 * it and whose wait is over, then moves them on: two statements per schedule, however many
 * contacts. The ledger's unique (schedule, enrolment) index makes a repeat harmless.
 */
async function queueDueSteps(trx: Knex.Transaction, automation: AutomationRow, schedules: Schedule[], now: Date): Promise<number> {
  const at = now.toISOString();
  let queued = 0;
  for (let i = 0; i < schedules.length; i += 1) {
    const next = schedules[i];
    const following = schedules[i + 1];
    // The enrolments whose previous step was the schedule before `next` and whose wait is over.
    const due = () =>
      trx('automation_enrolments')
        .where('automation_enrolments.automation_id', automation.id)
        .where('automation_enrolments.state', ENROLMENT_STATE.active)
        .where('automation_enrolments.next_due_at', '<=', at)
        .whereNull('automation_enrolments.journey_version_id')
        .whereRaw('coalesce(automation_enrolments.last_schedule_id, 0) >= ?', [i === 0 ? 0 : schedules[i - 1].id])
        .where((q) => q.whereNull('automation_enrolments.last_schedule_id').orWhere('automation_enrolments.last_schedule_id', '<', next.id));
    const inserted = await queueAutomationStep(trx, automation.id, next.id, due(), { enrolments: 'automation_enrolments' }, at);
    // The same rows move on to the next schedule, in one statement however many they are.
    await due().update({
      last_schedule_id: next.id,
      last_step_at: at,
      next_due_at: following ? new Date(now.getTime() + waitingMs(following)).toISOString() : null,
      updated_at: at,
    });
    queued += inserted;
  }
  return queued;
}
