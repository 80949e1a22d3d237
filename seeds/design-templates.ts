import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { PROJECT_ROOT } from '../src/lib/paths';
import { markSeeded, seededVersion } from './markers';

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
  // The files are small; the upsert is what a start need not repeat when nothing changed.
  const version = crypto.createHash('sha256').update(JSON.stringify(rows)).digest('hex');
  if ((await seededVersion(db, 'design_templates')) === version) return;
  await db.transaction(async (trx) => {
    await trx('design_templates').insert(rows).onConflict('id').merge();
    if (trx.client.config.client === 'pg') {
      await trx.raw(`select setval(pg_get_serial_sequence('design_templates', 'id'), (select max(id) from design_templates))`);
    }
    await markSeeded(trx, 'design_templates', version);
  });
}
