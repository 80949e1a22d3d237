import type { Knex } from 'knex';
import { insertId, nowValue } from '../../db/dialect';
import { AUTOMATION_STATUS, AUTOMATION_TYPES, LIMITS, WAITING_TYPES } from '../../lib/constants';
import { ValidationError } from '../../lib/errors';
import { newUtr } from '../../lib/utr';
import type { Ctx } from '../context';
import { recordAudit } from '../shared/audit-writer';
import type { JourneyGraph } from './graph';

/**
 * A journey as one JSON file, to move it to another account or installation: the graph and
 * the content of its emails. Senders, targets and groups belong to an account, so an import
 * leaves them to be chosen again (its emails take one of the account's senders for now).
 */

/** What the file format is called and which version of it this is. */
export const JOURNEY_FILE = { format: 'journey', version: 1 } as const;
/** The content of a step the file carries (not its sender, nor its relay). */
const CONTENT = ['subject', 'waiting_period', 'waiting_type', 'template_id', 'preview_img', 'template_json', 'template_html', 'track_opens', 'track_clicks'] as const;

export interface JourneyFile {
  format: 'journey';
  format_version: number;
  automation: { automation_name: string; automation_type: number };
  /** Whether the graph is a saved journey (else the steps' chain, imported as steps only). */
  journey: boolean;
  graph: JourneyGraph;
  emails: Array<{ ref: string } & Record<(typeof CONTENT)[number], unknown>>;
}

/** The file of an automation: its latest journey (or its chain) and every step's content. */
export async function journeyFile(db: Knex, automation: { id: number; automation_name: string; automation_type: number }, journey: { version: number; graph: JourneyGraph }): Promise<JourneyFile> {
  const steps = await db('automation_schedules').where({ automation_id: automation.id }).orderBy('id');
  return {
    format: JOURNEY_FILE.format,
    format_version: JOURNEY_FILE.version,
    automation: { automation_name: automation.automation_name, automation_type: automation.automation_type },
    journey: journey.version > 0,
    graph: journey.graph,
    emails: steps.map((s) => ({ ref: String(s.utr), ...(Object.fromEntries(CONTENT.map((c) => [c, s[c] ?? null])) as Record<(typeof CONTENT)[number], unknown>) })),
  };
}

const fileError = (text: string) => ValidationError.of('file', text);

/** Reads and checks the file's frame; the graph is checked by the caller against the new steps. */
export function readJourneyFile(text: string): JourneyFile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw fileError('The file must be a journey exported as JSON.');
  }
  const file = parsed as Partial<JourneyFile> | null;
  if (!file || typeof file !== 'object' || file.format !== JOURNEY_FILE.format || !file.automation || !Array.isArray(file.emails) || !file.graph) {
    throw fileError('The file must be a journey exported as JSON.');
  }
  if (file.format_version !== JOURNEY_FILE.version) throw fileError(`The file's format version ${String(file.format_version)} is not one this service reads (${JOURNEY_FILE.version}).`);
  const name = file.automation.automation_name;
  if (typeof name !== 'string' || !name.trim() || name.length > LIMITS.string) throw fileError('The file\'s automation has no usable name.');
  if (!(Object.values(AUTOMATION_TYPES) as number[]).includes(Number(file.automation.automation_type))) throw fileError('The file\'s automation type is unknown.');
  for (const email of file.emails) {
    if (!email || typeof email !== 'object' || typeof email.ref !== 'string' || typeof email.subject !== 'string' || !(WAITING_TYPES as readonly unknown[]).includes(email.waiting_type)) {
      throw fileError('An email of the file lacks its subject or waiting.');
    }
  }
  return file as JourneyFile;
}

/**
 * Makes a draft automation from a checked file, in the caller's transaction: no target and no
 * group (chosen again), its emails from `senderId`. Answers the automation's id and utr and
 * the graph with the new steps' utrs.
 */
export async function importJourneyFile(trx: Knex.Transaction, ctx: Ctx, file: JourneyFile, senderId: number): Promise<{ id: number; utr: string; graph: JourneyGraph }> {
  const now = nowValue();
  const utr = newUtr();
  const id = await insertId(trx, 'automations', {
    user_id: ctx.userId,
    automation_type: Number(file.automation.automation_type),
    automation_name: file.automation.automation_name.trim(),
    exit_criteria: 0,
    status: AUTOMATION_STATUS.draft,
    utr,
    created_at: now,
    updated_at: now,
  });
  const fallbackTemplate = (await trx('design_templates').orderBy('id').first('id'))?.id;
  const renamed = new Map<string, string>();
  for (const email of file.emails) {
    const stepUtr = newUtr();
    renamed.set(email.ref, stepUtr);
    const template = (await trx('design_templates').where({ id: Number(email.template_id) || 0 }).first('id'))?.id ?? fallbackTemplate;
    await trx('automation_schedules').insert({
      user_id: ctx.userId,
      automation_id: id,
      sender_id: senderId,
      subject: String(email.subject).slice(0, 998),
      waiting_period: Number(email.waiting_period) || 0,
      waiting_type: String(email.waiting_type),
      template_id: template,
      preview_img: String(email.preview_img ?? '').slice(0, 255),
      template_json: email.template_json ?? null,
      template_html: email.template_html ?? null,
      ...(email.track_opens === undefined || email.track_opens === null ? {} : { track_opens: email.track_opens }),
      ...(email.track_clicks === undefined || email.track_clicks === null ? {} : { track_clicks: email.track_clicks }),
      utr: stepUtr,
      created_at: now,
      updated_at: now,
    });
  }
  const nodes = Object.fromEntries(
    Object.entries(file.graph.nodes ?? {}).map(([nodeId, node]) => [
      nodeId,
      node && typeof node === 'object' && node.type === 'email' ? { ...node, schedule_utr: renamed.get(node.schedule_utr) ?? node.schedule_utr } : node,
    ]),
  );
  await recordAudit(trx, ctx, { action: 'automation.created', recordType: 'automation', recordId: utr, summary: `${file.automation.automation_name} (imported)` }, now);
  return { id, utr, graph: { start: file.graph.start, nodes } };
}
