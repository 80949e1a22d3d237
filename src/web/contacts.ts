import type { NextFunction, Request, Response } from 'express';
import { contactInput, contactRules } from '../http/inputs/contacts';
import { ctxOf } from '../http/context';
import { CONTACT_TEXT_COLUMNS } from '../lib/constants';
import { timeZoneOptions } from '../lib/time-zones';
import { bulkIds, toId } from '../lib/http';
import { validate } from '../http/validation';
import type { Services } from '../services';
import type { ContactRecord } from '../services/audience/contact-records';
import { onInvalid } from './errors';
import { counted } from './forms';
import { keysetOf, keysetPagerOf, offsetAsKeyset, PER_PAGE, pagingOf } from './paging';
import type { WebRoutes } from './routes';
import type { Views } from './views';

const LIST = { 'contact-list': 'contacts/macros.njk#list' } as const;
/** The form's own controls; messages about anything else are shown above it. */
const SHOWN_FIELDS = ['contact_type_id', 'email', 'first_name', 'last_name', 'alt_email', 'country', 'time_zone', ...Object.keys(CONTACT_TEXT_COLUMNS)];

/** The search box's text ('' when none). */
const searchOf = (req: Request) => (typeof req.query.search === 'string' ? req.query.search.trim() : '');

/** A stored contact as the form's values (custom fields by name). */
function formValues(contact: ContactRecord) {
  const custom: Record<string, string> = {};
  for (const [name, value] of Object.entries(contact.custom_field ?? {})) custom[name] = value.field_value ?? '';
  return { ...contact, alt_email: contact.alt_email ?? '', time_zone: contact.time_zone ?? '', custom_field: custom };
}

/** Contacts: one page at a time with search, add and edit with custom fields, row and bulk delete; the service of `/contacts/*`. */
export function mountContacts(routes: WebRoutes, services: Services, views: Views): void {
  const { contacts, contactTypes, fields, geography, signups } = services;
  const idOf = (req: Request) => toId(req.params.id) ?? 0;

  /** The form's choices: contact types, countries, and the account's custom fields by type. */
  const choices = async (req: Request) => {
    const ctx = ctxOf(req);
    const [types, countries, custom] = await Promise.all([contactTypes.list(ctx), geography.countries(), fields.listCustom(ctx)]);
    return {
      types: [{ value: '', label: 'Choose a contact type' }, ...types.rows.map((t) => ({ value: t.id, label: t.name }))],
      countries: [{ value: '', label: 'Choose a country' }, ...countries.map((c) => ({ value: c.id, label: c.name }))],
      timeZones: [{ value: '', label: 'From the country and state' }, ...timeZoneOptions(new Date())],
      customFields: custom,
      shownFields: [...SHOWN_FIELDS, ...custom.map((f) => `custom_field[${f.field_name}]`)],
    };
  };
  const newForm = async (req: Request) => ({ title: 'New contact', action: '/contacts/new', ...(await choices(req)) });
  const editForm = async (req: Request) => {
    const [contact, form] = await Promise.all([contacts.get(ctxOf(req), idOf(req)), choices(req)]);
    const [consents, sendingZone] = await Promise.all([signups.consents(ctxOf(req), contact.email), contacts.timeZoneOf(ctxOf(req), contact.id)]);
    return { title: `Edit ${contact.fullname || contact.email}`, action: `/contacts/${contact.id}/edit`, contact, consents, sendingZone, ...form };
  };

  // Pages go by contact id (any depth as fast as the first); an old `?page=N` address still
  // reads its offset page, and one past the end shows the last page.
  const pageOf = async (req: Request, search: string | undefined) => {
    const ctx = ctxOf(req);
    const keyset = keysetOf(req);
    if (keyset) return contacts.listPageAfter(ctx, keyset, search);
    const offset = await contacts.listPage(ctx, pagingOf(req), search);
    return offset.rows.length ? offsetAsKeyset(offset) : contacts.listPageAfter(ctx, { last: true, perPage: PER_PAGE }, search);
  };
  const listPage = async (req: Request, res: Response) => {
    const search = searchOf(req);
    const result = await pageOf(req, search || undefined);
    views.page(req, res, 'contacts/index.njk', { title: 'Contacts', contacts: result.rows, search, pager: keysetPagerOf(req, result, '/contacts') }, { fragments: LIST });
  };

  routes.get('/contacts', listPage);

  routes.get('/contacts/new', async (req, res) => {
    const form = await newForm(req);
    views.page(req, res, 'contacts/form.njk', { ...form, values: { contact_type_id: toId(req.query.contact_type_id) } });
  });

  routes.post('/contacts/new', onInvalid('contacts/form.njk', newForm), validate(...contactRules()), async (req, res) => {
    await contacts.add(ctxOf(req), contactInput(req));
    views.redirect(res, '/contacts', 'Contact added.');
  });

  routes.get('/contacts/:id/edit', async (req, res) => {
    const form = await editForm(req);
    views.page(req, res, 'contacts/form.njk', { ...form, values: formValues(form.contact) });
  });

  // A contact without a country (it came in by import or signup) may be saved without one; the
  // API keeps the reference's rule. The strict rules describe the route.
  const strict = validate(...contactRules());
  const withoutCountry = validate(...contactRules({ countryRequired: false }));
  const editRules = Object.assign(
    async (req: Request, res: Response, next: NextFunction) => {
      const contact = await contacts.get(ctxOf(req), idOf(req));
      return (contact.country === null ? withoutCountry : strict)(req, res, next);
    },
    { rules: strict.rules },
  );
  routes.post('/contacts/:id/edit', onInvalid('contacts/form.njk', editForm), editRules, async (req, res) => {
    await contacts.update(ctxOf(req), idOf(req), contactInput(req));
    views.redirect(res, '/contacts', 'Contact saved.');
  });

  // Row and bulk deletes (htmx swaps the list in place; a plain form is redirected).
  routes.post('/contacts/delete', async (req, res) => {
    const ids = bulkIds(req.body.ids, 'ids');
    await contacts.removeMany(ctxOf(req), ids);
    await views.changed(req, res, '/contacts', counted(ids.length, 'Contact', 'contacts', 'deleted'), () => listPage(req, res));
  });
}
