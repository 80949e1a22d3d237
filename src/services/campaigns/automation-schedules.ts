import path from 'node:path';
import { insertId, nowValue } from '../../db/dialect';
import { FieldErrors, NotFoundError } from '../../lib/errors';
import { timestamp } from '../../lib/time';
import { API_PREFIX } from '../../lib/paths';
import { isUtr, newUtr } from '../../lib/utr';
import { messages, throwIfAny } from '../../lib/validation';
import type { SenderValues } from '../../mail/personal-values';
import { fillPlaceholders } from '../../mail/template';
import { liquidErrors } from './template-syntax';
import type { AutomationsService } from './automations';
import type { CampaignRefs } from './campaign-refs';
import type { Ctx, ServiceDeps } from '../context';
import type { SendersService } from './senders';
import { accountTracking, switchesOf, TrackingSwitches, withDefaults } from './tracking-switches';

export interface ScheduleInput extends TrackingSwitches {
  sender_id: number;
  subject: string;
  waiting_period: number;
  waiting_type: string;
  template_id: number;
  preview_img: string;
  template_json: string | null;
  template_html: string | null;
  /** Extension: the account's relay this step's mail goes through first (null: the usual choice); absent: unchanged on update. */
  relay_id?: number | null;
}

/**
 * Public links of a schedule: its rendered design, keyed by the unguessable utr, and its
 * preview image. The reference puts both "under {base_url}", i.e. under the API prefix.
 */
export function scheduleLinks(baseUrl: string, row: Record<string, unknown>) {
  return {
    design_url: `${baseUrl}${API_PREFIX}/preview/schedule/${row.utr}`,
    image: `${baseUrl}${API_PREFIX}/templates/${encodeURIComponent(String(row.preview_img))}`,
  };
}

export function scheduleRecord(baseUrl: string, row: Record<string, unknown>) {
  return {
    id: Number(row.id),
    user_id: Number(row.user_id),
    automation_id: Number(row.automation_id),
    sender_id: Number(row.sender_id),
    subject: String(row.subject),
    waiting_period: Number(row.waiting_period),
    waiting_type: String(row.waiting_type),
    utr: String(row.utr),
    template_id: Number(row.template_id),
    preview_img: String(row.preview_img),
    // The reference types both as strings: the one not given is empty.
    template_json: row.template_json === null || row.template_json === undefined ? '' : String(row.template_json),
    template_html: row.template_html === null || row.template_html === undefined ? '' : String(row.template_html),
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
    ...scheduleLinks(baseUrl, row),
    // Extension: the account's relay this step's mail goes through first; null: the account's usual choice.
    relay_id: row.relay_id === null || row.relay_id === undefined ? null : Number(row.relay_id),
    // Extensions: open and click tracking of this step (0 or 1).
    ...switchesOf(row),
  };
}

export type ScheduleRecord = ReturnType<typeof scheduleRecord>;

interface ScheduleDeps extends Pick<ServiceDeps, 'db' | 'config'> {
  refs: CampaignRefs;
  automations: Pick<AutomationsService, 'idOf'>;
  senders: Pick<SendersService, 'find' | 'postalAddress'>;
}

export function createAutomationSchedulesService({ db, config, refs, automations, senders }: ScheduleDeps) {
  /** Schedules of the account's live (not deleted) automations. */
  const owned = (ctx: Ctx) =>
    db('automation_schedules')
      .join('automations', 'automations.id', 'automation_schedules.automation_id')
      .where('automation_schedules.user_id', ctx.userId)
      .whereNull('automations.deleted_at');

  async function checkReferences(ctx: Ctx, input: ScheduleInput, editorDesign = false): Promise<void> {
    const [sender, template, images] = await Promise.all([refs.sender(ctx, input.sender_id, false), refs.templateError(input.template_id), refs.previewImages()]);
    const errors: FieldErrors = {};
    if (sender.error) errors.sender_id = [sender.error];
    if (template) errors.template_id = [template];
    if (input.relay_id && !(await db('relays').where({ id: input.relay_id, user_id: ctx.userId }).first('id'))) errors.relay_id = [messages.selected('relay_id')];
    if (!images.has(input.preview_img)) errors.preview_img = [messages.selected('preview_img')];
    liquidErrors({ subject: input.subject, template_html: input.template_html }, errors);
    // The API takes one of the pair; the dashboard's visual editor saves its project with the HTML it exported.
    if (input.template_json && input.template_html && !editorDesign) {
      errors.template_json = ['The template json field prohibits template html from being present.'];
    }
    throwIfAny(errors);
  }

  return {
    /** The automation's schedules in the order they are sent. */
    async list(ctx: Ctx, automationUtr: string): Promise<ScheduleRecord[]> {
      const automationId = await automations.idOf(ctx, automationUtr);
      const rows = await db('automation_schedules').where({ automation_id: automationId, user_id: ctx.userId }).orderBy('id');
      return rows.map((row) => scheduleRecord(config.baseUrl, row));
    },

    /** One schedule of a live automation of the account, by its own utr. */
    async get(ctx: Ctx, utr: string): Promise<ScheduleRecord> {
      const row = isUtr(utr) ? await owned(ctx).where('automation_schedules.utr', utr).first('automation_schedules.*') : undefined;
      if (!row) throw new NotFoundError();
      return scheduleRecord(config.baseUrl, row);
    },

    /** Appends a schedule to the automation named by `automationUtr`. */
    async create(ctx: Ctx, automationUtr: string, input: ScheduleInput): Promise<string> {
      const automationId = await automations.idOf(ctx, automationUtr);
      const normalised = { ...input, preview_img: path.posix.basename(input.preview_img) };
      await checkReferences(ctx, normalised);
      const now = nowValue();
      const utr = newUtr();
      const switches = withDefaults(input, await accountTracking(db, ctx.userId));
      await insertId(db, 'automation_schedules', { ...normalised, ...switches, user_id: ctx.userId, automation_id: automationId, utr, created_at: now, updated_at: now });
      return utr;
    },

    /**
     * Replaces a schedule's parameters (extension: `POST /automations/schedule/update?utr=`, the
     * schedule's own utr). Allowed in any state of the automation: the workers pick the new
     * content up at their next batch, so messages not yet sent go out as edited; the links of
     * mail already sent keep leading where they did (see MessageSources). Tracking switches
     * not given keep their values.
     */
    async update(ctx: Ctx, utr: string, input: ScheduleInput, { editorDesign = false } = {}): Promise<void> {
      const row = isUtr(utr) ? await owned(ctx).where('automation_schedules.utr', utr).first('automation_schedules.*') : undefined;
      if (!row) throw new NotFoundError();
      const normalised = { ...input, preview_img: path.posix.basename(input.preview_img) };
      await checkReferences(ctx, normalised, editorDesign);
      const switches = withDefaults(input, switchesOf(row));
      await db('automation_schedules').where({ id: row.id }).update({ ...normalised, ...switches, updated_at: nowValue() });
    },

    /** Deletes one schedule, addressed by its own utr. */
    async remove(ctx: Ctx, utr: string): Promise<void> {
      const row = isUtr(utr) ? await owned(ctx).where('automation_schedules.utr', utr).first('automation_schedules.id') : undefined;
      if (!row) throw new NotFoundError();
      await db('automation_schedules').where({ id: row.id }).delete();
    },

    /**
     * The schedule's design as a page (for `design_url`): its own HTML, else its template's,
     * with the sender placeholders filled in; contact placeholders stay visible as ((name)).
     * Undefined when the utr names no schedule of a live automation.
     */
    async designHtml(utr: string): Promise<string | undefined> {
      if (!isUtr(utr)) return undefined;
      const schedule = await db('automation_schedules')
        .join('automations', 'automations.id', 'automation_schedules.automation_id')
        .join('design_templates', 'design_templates.id', 'automation_schedules.template_id')
        .where('automation_schedules.utr', utr)
        .whereNull('automations.deleted_at')
        .first('automation_schedules.*', 'design_templates.html_code');
      if (!schedule) return undefined;
      const sender = await senders.find({ userId: Number(schedule.user_id) }, Number(schedule.sender_id));
      const values: SenderValues | Record<string, never> = sender
        ? { sender_name: sender.from_name, sender_address: await senders.postalAddress(sender) }
        : {};
      return fillPlaceholders(String(schedule.template_html || schedule.html_code), values);
    },
  };
}

export type AutomationSchedulesService = ReturnType<typeof createAutomationSchedulesService>;
