import type { Request } from 'express';
import { CONTACT_TEXT_COLUMNS, ContactTextColumn } from '../lib/constants';
import { sendSuccess } from '../lib/envelope';
import { ValidationError } from '../lib/errors';
import { toId } from '../lib/http';
import { field, messages, Rule, validate } from '../lib/validation';
import type { Services } from '../services';
import type { ContactInput } from '../services/contacts';
import { bulkDelete, deleteById } from './crud';
import { ApiRoutes, ctxOf, listMessage, pagingOf } from './routes';
import { sendStreamedList } from './stream-list';
import { mountContactImport } from './contact-import';
import type { Config } from '../config';

const EMAIL_MAX = 320;

/** The contact parameters of add and update. */
export function contactRules(): Rule[] {
  return [
    field('contact_type_id').required().integer(),
    field('email').required().string().maxLength(EMAIL_MAX).email(),
    field('country').required().integer(),
    field('alt_email').optional().string().maxLength(EMAIL_MAX).email(),
    ...Object.entries(CONTACT_TEXT_COLUMNS).map(([name, max]) => field(name).optional().string().maxLength(max)),
    field('custom_field')
      .optional()
      .check((v) => typeof v === 'object' && v !== null && !Array.isArray(v), messages.array('custom_field')),
  ];
}

export function contactInput(req: Request): ContactInput {
  const body = req.body as Record<string, unknown>;
  const text: ContactInput['text'] = {};
  for (const column of Object.keys(CONTACT_TEXT_COLUMNS) as ContactTextColumn[]) {
    if (body[column] !== undefined && body[column] !== null) text[column] = String(body[column]);
  }
  return {
    contact_type_id: toId(body.contact_type_id) ?? 0,
    email: String(body.email),
    country: toId(body.country) ?? 0,
    alt_email: body.alt_email === undefined ? undefined : body.alt_email === null ? null : String(body.alt_email),
    text,
    custom_field: body.custom_field as Record<string, unknown> | undefined,
  };
}

/** The optional `search` extension: a name or email fragment. */
function searchOf(req: Request): string | undefined {
  const search = req.query.search;
  if (search === undefined) return undefined;
  if (typeof search !== 'string') throw ValidationError.of('search', messages.string('search'));
  return search;
}

export function mountContacts(routes: ApiRoutes, services: Services, config: Config): void {
  const { contacts } = services;

  routes.get('/contacts/list', async (req, res) => {
    const search = searchOf(req);
    const paging = pagingOf(req);
    if (paging) return sendSuccess(res, listMessage('contacts', await contacts.listPage(ctxOf(req), paging, search)));
    await sendStreamedList(res, 'contacts', contacts.listChunks(ctxOf(req), search));
  });

  routes.post('/contacts/add', validate(...contactRules()), async (req, res) => {
    await contacts.add(ctxOf(req), contactInput(req));
    sendSuccess(res, 'Contact Added Successfully');
  });

  mountContactImport(routes, services, config);

  routes.get('/contacts/details', validate(field('contact_id', 'query').required().integer()), async (req, res) => {
    const contact = await contacts.get(ctxOf(req), toId(req.query.contact_id) ?? 0);
    sendSuccess(res, { contact });
  });

  routes.post('/contacts/update', validate(field('contact_id').required().integer(), ...contactRules()), async (req, res) => {
    await contacts.update(ctxOf(req), toId(req.body.contact_id) ?? 0, contactInput(req));
    sendSuccess(res, 'Contact Updated Successfully');
  });

  deleteById(routes, '/contacts/delete', 'contact_id', contacts.removeMany);
  bulkDelete(routes, '/contacts/bulk-delete', contacts.removeMany);
}
