import { CUSTOM_FIELD_TYPES, CustomFieldType, LIMITS } from '../lib/constants';
import { sendSuccess } from '../lib/envelope';
import { field, validate } from '../lib/validation';
import type { Services } from '../services';
import { deleteById } from './crud';
import { ApiRoutes, ctxOf, listMessage, pagingOf } from './routes';

/** Shared with the dashboard's custom-fields form. */
export const customFieldRules = () => [
  field('field_name').required().string().matches(/^[A-Za-z0-9_]+$/).maxLength(LIMITS.fieldName),
  field('field_type').required().oneOf(CUSTOM_FIELD_TYPES),
];

export function mountFields(routes: ApiRoutes, { fields }: Services): void {
  routes.get('/reserve-fields', async (req, res) => {
    sendSuccess(res, listMessage('reservedFields', await fields.listReserved(pagingOf(req))));
  });

  routes.get('/custom-fields', async (req, res) => {
    sendSuccess(res, listMessage('customFields', await fields.pageCustom(ctxOf(req), pagingOf(req))));
  });

  routes.post(
    '/custom-fields/save',
    validate(...customFieldRules()),
    async (req, res) => {
      await fields.addCustom(ctxOf(req), { field_name: String(req.body.field_name), field_type: String(req.body.field_type).trim() as CustomFieldType });
      sendSuccess(res, 'Added Successfully');
    },
  );

  deleteById(routes, '/custom-fields/delete', 'id', fields.removeCustom);
}
