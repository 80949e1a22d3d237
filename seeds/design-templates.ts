import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { PROJECT_ROOT } from '../src/lib/paths';

interface TemplateEntry {
  slug: string;
  template_name: string;
  is_blank: number;
}

/** The built-in templates: index.json plus <slug>/template.{html,json}. */
export const TEMPLATES_DIR = path.join(PROJECT_ROOT, 'seeds', 'data', 'templates');

/** Template ids follow index.json order; id 1 is the blank template. Rows are upserted by id. */
export async function seedDesignTemplates(db: Knex): Promise<void> {
  const dir = TEMPLATES_DIR;
  const entries = JSON.parse(fs.readFileSync(path.join(dir, 'index.json'), 'utf8')) as TemplateEntry[];
  const rows = entries.map((entry, index) => ({
    id: index + 1,
    template_name: entry.template_name,
    preview_image: `${entry.slug}.png`,
    json_code: fs.readFileSync(path.join(dir, entry.slug, 'template.json'), 'utf8'),
    html_code: fs.readFileSync(path.join(dir, entry.slug, 'template.html'), 'utf8'),
    is_blank: entry.is_blank,
    created_at: null,
    updated_at: null,
  }));
  await db('design_templates').insert(rows).onConflict('id').merge();
  if (db.client.config.client === 'pg') {
    await db.raw(`select setval(pg_get_serial_sequence('design_templates', 'id'), (select max(id) from design_templates))`);
  }
}
