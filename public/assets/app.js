// The dashboard's only script besides htmx (the Content-Security-Policy allows no inline code).

// Narrow screens fold the navigation behind its Menu button (see app.css); without this script
// the links simply stay open.
document.documentElement.classList.add('js');
document.addEventListener('click', (event) => {
  const toggle = event.target.closest?.('.nav-toggle');
  if (!toggle) return;
  const nav = toggle.closest('.sidebar');
  const open = !nav.classList.contains('nav-open');
  nav.classList.toggle('nav-open', open);
  toggle.setAttribute('aria-expanded', String(open));
});

// Every htmx request carries the session's CSRF token as a header; plain forms carry it as a
// hidden _csrf field. The token is in the head, which a sign-in or sign-out reloads whole.
document.addEventListener('htmx:config:request', (event) => {
  const meta = document.querySelector('meta[name="csrf-token"]');
  if (meta) event.detail.ctx.request.headers['X-CSRF-Token'] = meta.content;
});

// A field shown invalid stops saying so once it is edited.
document.addEventListener('input', (event) => {
  const field = event.target.closest?.('.field.invalid');
  if (!field) return;
  field.classList.remove('invalid');
  event.target.removeAttribute('aria-invalid');
});

// Copy buttons (sending domains' DNS records): copy the named field's value and say so.
document.addEventListener('click', async (event) => {
  const button = event.target.closest?.('[data-copy]');
  if (!button) return;
  const field = document.getElementById(button.dataset.copy);
  if (!field) return;
  field.select();
  let copied = false;
  try {
    await navigator.clipboard.writeText(field.value);
    copied = true;
  } catch {
    copied = false;
  }
  const status = document.querySelector('.copy-status');
  // Said in the status line only: the button keeps its name (its accessible name starts with it).
  if (status) status.textContent = copied ? 'Copied.' : 'Selected: press Ctrl+C (or ⌘C) to copy.';
});

// The segment builder changes a condition in place when its field or operator changes: the
// operators of the field's kind and the value fields of the operator (from the templates and
// data-* of #segment-builder), before htmx asks for the count (capture phase). The select under
// the keyboard is never replaced, so quick ArrowDowns and type-ahead keep every key.
document.addEventListener('change', (event) => {
  const select = event.target;
  const role = select.dataset?.role;
  const row = select.closest?.('.condition');
  const builder = select.closest?.('#segment-builder');
  if ((role !== 'field' && role !== 'operator') || !row || !builder) return;
  const field = row.querySelector('[data-role="field"]');
  const operator = row.querySelector('[data-role="operator"]');
  const kind = field.selectedOptions[0]?.dataset.kind;
  if (!kind) return;
  if (operator.dataset.kind !== kind) {
    const choices = JSON.parse(builder.dataset.operators)[kind];
    const keep = choices.some(([value]) => value === operator.value) ? operator.value : choices[0][0];
    operator.replaceChildren(...choices.map(([value, label]) => new Option(label, value, value === keep, value === keep)));
    operator.dataset.kind = kind;
  }
  // The chosen options are marked in the markup too, as a server-rendered row would be.
  for (const s of [field, operator]) for (const option of s.options) option.defaultSelected = option.selected;
  const shape = JSON.parse(builder.dataset.shapes)[kind][operator.value];
  const values = row.querySelector('.condition-values');
  if (values.dataset.shape === shape) return;
  const template = document.getElementById(`segment-shape-${shape}`);
  const i = row.dataset.index;
  values.innerHTML = template.innerHTML.replaceAll('__i__', i).replaceAll('__n__', String(Number(i) + 1));
  values.dataset.shape = shape;
  window.htmx?.process(values);
}, true);
