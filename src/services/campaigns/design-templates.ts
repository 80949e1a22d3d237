import { listPage, Paging } from '../../db/paging';
import { DYNAMIC_CONTENT } from '../../lib/constants';
import { NotFoundError } from '../../lib/errors';
import { timestamp } from '../../lib/time';
import type { ServiceDeps } from '../context';

export interface DesignTemplateRecord {
  id: number;
  template_name: string;
  preview_image: string;
  json_code: string;
  html_code: string;
  is_blank: number;
  created_at: string | null;
  updated_at: string | null;
}

export function designTemplateRecord(row: Record<string, unknown>): DesignTemplateRecord {
  return {
    id: Number(row.id),
    template_name: String(row.template_name),
    preview_image: String(row.preview_image),
    json_code: String(row.json_code),
    html_code: String(row.html_code),
    is_blank: Number(row.is_blank),
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}

/**
 * The built-in design templates (seeded reference data, the same for every account, id 1 the
 * blank one) and the dynamic-content placeholder names.
 */
export function createDesignTemplatesService({ db }: Pick<ServiceDeps, 'db'>) {
  return {
    async list(paging?: Paging) {
      return listPage(db('design_templates').orderBy('id'), paging, designTemplateRecord);
    },

    async get(id: number): Promise<DesignTemplateRecord> {
      const row = await db('design_templates').where({ id }).first();
      if (!row) throw new NotFoundError();
      return designTemplateRecord(row);
    },

    /** True when the id names a template (single sends and schedules check it). */
    async exists(id: number): Promise<boolean> {
      return Boolean(await db('design_templates').where({ id }).first('id'));
    },

    dynamicContent(): readonly string[] {
      return DYNAMIC_CONTENT;
    },
  };
}

export type DesignTemplatesService = ReturnType<typeof createDesignTemplatesService>;
