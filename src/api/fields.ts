import { CustomFieldType } from '../lib/constants';
import { sendSuccess } from '../lib/envelope';
import { validate } from '../http/validation';
import type { Services } from '../services';
import { deleteById } from './crud';
import { lists, ref, says } from './describe';
import { ApiRoutes } from './routes';
import { ctxOf } from '../http/context';
import { listMessage, PAGING_PARAMS, pagingOf } from '../http/paging';
import { customFieldRules } from '../http/inputs/fields';

export function mountFields(routes: ApiRoutes, { fields }: Services): void {
  routes.get('/reserve-fields', { summary: 'List the reserved contact fields', response: lists('reservedFields', ref('Field')), params: PAGING_PARAMS }, async (req, res) => {
    sendSuccess(res, listMessage('reservedFields', await fields.listReserved(pagingOf(req))));
  });

  routes.get('/custom-fields', { summary: 'List custom fields', response: lists('customFields', ref('Field')), params: PAGING_PARAMS }, async (req, res) => {
    sendSuccess(res, listMessage('customFields', await fields.pageCustom(ctxOf(req), pagingOf(req))));
  });

  routes.post(
    '/custom-fields/save',
    { summary: 'Add a custom field', response: says('Added Successfully') },
    validate(...customFieldRules()),
    async (req, res) => {
      await fields.addCustom(ctxOf(req), { field_name: String(req.body.field_name), field_type: String(req.body.field_type).trim() as CustomFieldType });
      sendSuccess(res, 'Added Successfully');
    },
  );

  deleteById(routes, '/custom-fields/delete', 'id', fields.removeCustom, 'Delete a custom field and its values');
}
