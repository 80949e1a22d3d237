import type { Request, Response } from 'express';
import type { Config } from '../config';
import { ctxOf } from '../http/context';
import { signupFormInput, signupFormRules } from '../http/inputs/signup-forms';
import { validate } from '../http/validation';
import { SIGNUP } from '../lib/constants';
import { toId } from '../lib/http';
import { lazy } from '../lib/lazy';
import { createViews } from '../lib/views';
import type { Services } from '../services';
import { COUNTRY_FIELD, COUNTRY_LABEL, FORM_TEXT_FIELDS, formFields, SignupFormRecord } from '../services/audience/signup-forms';
import { onInvalid } from './errors';
import { listFields } from './forms';
import type { WebRoutes } from './routes';
import type { Views } from './views';

const LIST = { 'signup-form-list': 'signup-forms/macros.njk#list' } as const;
/** The snippet is rendered to text (autoescaped like any page), then shown as text to copy. */
const snippetViews = lazy(() => createViews({ trimBlocks: true, lstripBlocks: true }));

/**
 * Signup forms: create, edit and delete the public double opt-in forms of
 * the account's contact types; each form's page shows its public URL and an HTML snippet that
 * another site can paste (a plain `<form method="post">` to that URL).
 */
export function mountSignupForms(routes: WebRoutes, { signupForms, contactTypes, fields, geography }: Services, views: Views, config: Config): void {
  const idOf = (req: Request) => toId(req.params.id) ?? 0;
  const publicUrl = (form: SignupFormRecord) => `${config.baseUrl}/subscribe/${form.public_id}`;

  /** The form's choices: contact types, the fields a form may ask, the groups it may offer. */
  const choices = async (req: Request) => {
    const ctx = ctxOf(req);
    const [types, custom, groups, senders] = await Promise.all([contactTypes.list(ctx), fields.listCustom(ctx), signupForms.offerableGroups(ctx), signupForms.senderChoices(ctx)]);
    return {
      senderChoices: [{ value: '', label: 'The service’s own address' }, ...senders.map((s) => ({ value: s.id, label: `${s.from_name || s.nickname} — ${s.from_email}` }))],
      types: [{ value: '', label: 'Choose a contact type' }, ...types.rows.map((t) => ({ value: t.id, label: t.name }))],
      fieldChoices: [
        ...Object.entries(FORM_TEXT_FIELDS).map(([value, label]) => ({ value, label })),
        { value: COUNTRY_FIELD, label: COUNTRY_LABEL },
        ...custom.map((f) => ({ value: f.field_name, label: `${f.label} (custom field)` })),
      ],
      groups,
      groupChoices: groups.map((g) => ({ value: g.id, label: g.group_name })),
    };
  };
  const newForm = async (req: Request) => ({ title: 'New signup form', action: '/signup-forms/new', ...(await choices(req)) });
  const editForm = async (req: Request) => {
    const [form, rest] = await Promise.all([signupForms.get(ctxOf(req), idOf(req)), choices(req)]);
    return { title: `Edit ${form.name}`, action: `/signup-forms/${form.id}/edit`, form, ...rest };
  };
  /** What a refused form shows again: no box ticked is no list at all in the body. */
  const posted = () => ({ values: { fields: [], required_fields: [], group_ids: [] } });

  const listPage = async (req: Request, res: Response) => {
    const forms = await signupForms.list(ctxOf(req));
    views.page(req, res, 'signup-forms/index.njk', { title: 'Signup forms', forms: forms.map((f) => ({ ...f, url: publicUrl(f) })) }, { fragments: LIST });
  };

  routes.get('/signup-forms', listPage);

  routes.get('/signup-forms/new', async (req, res) => {
    const form = await newForm(req);
    views.page(req, res, 'signup-forms/form.njk', {
      ...form,
      values: { contact_type_id: toId(req.query.contact_type_id), fields: ['first_name', 'last_name'], required_fields: [], group_ids: form.groups.map((g) => g.id) },
    });
  });

  routes.post('/signup-forms/new', listFields('fields', 'required_fields', 'group_ids'), onInvalid('signup-forms/form.njk', async (req) => ({ ...(await newForm(req)), ...posted() })), validate(...signupFormRules()), async (req, res) => {
    const id = await signupForms.add(ctxOf(req), signupFormInput(req));
    views.redirect(res, `/signup-forms/${id}`, 'Signup form created. Share its link or paste its HTML into your site.');
  });

  routes.get('/signup-forms/:id', async (req, res) => {
    const ctx = ctxOf(req);
    const form = await signupForms.get(ctx, idOf(req));
    const [custom, groups, types] = await Promise.all([fields.listCustom(ctx), signupForms.offerableGroups(ctx), contactTypes.list(ctx)]);
    const offered = groups.filter((g) => form.group_ids.includes(g.id));
    const shown = formFields(
      form.fields,
      custom.map((f) => ({ id: f.id, field_name: f.field_name, field_type: f.field_type as 'text', label: f.label })),
      form.required_fields,
      form.fields.includes(COUNTRY_FIELD) ? (await geography.countries()).map((c) => ({ value: c.id, label: c.name })) : [],
    );
    const snippet = snippetViews().render('signup-forms/snippet.njk', { action: publicUrl(form), fields: shown, groups: offered, honeypot: SIGNUP.honeypot }).trim();
    views.page(req, res, 'signup-forms/show.njk', {
      title: form.name,
      form,
      url: publicUrl(form),
      snippet,
      fieldLabels: shown.map((f) => (f.required ? `${f.label} (required)` : f.label)),
      groups: offered,
      contactType: types.rows.find((t) => t.id === form.contact_type_id),
    });
  });

  routes.get('/signup-forms/:id/edit', async (req, res) => {
    const form = await editForm(req);
    views.page(req, res, 'signup-forms/form.njk', { ...form, values: form.form });
  });

  routes.post('/signup-forms/:id/edit', listFields('fields', 'required_fields', 'group_ids'), onInvalid('signup-forms/form.njk', async (req) => ({ ...(await editForm(req)), ...posted() })), validate(...signupFormRules()), async (req, res) => {
    await signupForms.update(ctxOf(req), idOf(req), signupFormInput(req));
    views.redirect(res, `/signup-forms/${idOf(req)}`, 'Signup form saved.');
  });

  routes.post('/signup-forms/:id/delete', async (req, res) => {
    await signupForms.remove(ctxOf(req), idOf(req));
    await views.changed(req, res, '/signup-forms', 'Signup form deleted: its page and unconfirmed links no longer work.', () => listPage(req, res));
  });
}
