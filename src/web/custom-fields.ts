import type { Request, Response } from 'express';
import { customFieldRules } from '../http/inputs/fields';
import { ctxOf } from '../http/context';
import { CUSTOM_FIELD_TYPES, CustomFieldType, FIELD_LABELS } from '../lib/constants';
import { bulkIds } from '../lib/http';
import { validate } from '../http/validation';
import type { Services } from '../services';
import { onInvalid } from './errors';
import type { WebRoutes } from './routes';
import type { Views } from './views';

const LIST = { 'custom-field-list': 'custom-fields/macros.njk#list' } as const;
const TYPE_LABELS: Record<CustomFieldType, string> = { text: 'Text', number: 'Number', 'datetime-local': 'Date and time' };
const TYPE_CHOICES = CUSTOM_FIELD_TYPES.map((value) => ({ value, label: TYPE_LABELS[value] }));

/** Custom fields (and the reserved ones, read-only): the same service and rules as `/custom-fields`. */
export function mountCustomFields(routes: WebRoutes, { fields }: Services, views: Views): void {
  const data = async (req: Request) => {
    const [custom, reserved] = await Promise.all([fields.listCustom(ctxOf(req)), fields.listReserved()]);
    return { title: 'Custom fields', fields: custom.reverse(), reserved: reserved.rows, fieldLabels: FIELD_LABELS, types: TYPE_CHOICES, typeLabels: TYPE_LABELS };
  };
  const page = async (req: Request, res: Response) => views.page(req, res, 'custom-fields/index.njk', await data(req), { fragments: LIST });

  routes.get('/custom-fields', page);

  routes.post('/custom-fields', onInvalid('custom-fields/index.njk', data), validate(...customFieldRules()), async (req, res) => {
    await fields.addCustom(ctxOf(req), { field_name: String(req.body.field_name), field_type: String(req.body.field_type).trim() as CustomFieldType });
    views.redirect(res, '/custom-fields', `Field “${String(req.body.field_name)}” added.`);
  });

  routes.post('/custom-fields/delete', async (req, res) => {
    await fields.removeCustom(ctxOf(req), bulkIds(req.body.ids, 'ids'));
    await views.changed(req, res, '/custom-fields', 'Field deleted, with its values on every contact.', () => page(req, res));
  });
}
