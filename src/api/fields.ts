import { CustomFieldType } from '../lib/constants';
import { sendSuccess } from '../lib/envelope';
import { validate } from '../http/validation';
import type { Services } from '../services';
import { deleteById } from './crud';
import { ApiRoutes } from './routes';
import { ctxOf } from '../http/context';
import { listMessage, pagingOf } from '../http/paging';
import { customFieldRules } from '../http/inputs/fields';

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
