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

// A table wider than its box scrolls inside it: the box becomes a named tab stop, so the
// keyboard's arrows scroll it (app.css keeps its scrollbar visible).
const scrollableTables = () => {
  for (const box of document.querySelectorAll('.table-scroll, .table-wrap')) {
    const wide = box.scrollWidth > box.clientWidth + 1;
    if (!wide || box.hasAttribute('tabindex')) continue;
    const heading = box.previousElementSibling?.matches('h2, h3') ? box.previousElementSibling.textContent.trim() : '';
    box.tabIndex = 0;
    box.setAttribute('role', 'region');
    box.setAttribute('aria-label', `${heading || 'Table'} (scrolls sideways)`);
  }
};

// On a phone a table's rows stack (app.css): each cell shows its column's name before it,
// copied here from the heading (a heading only a screen reader reads, such as "Actions",
// is left out: its cells speak for themselves).
const labelTableCells = () => {
  for (const table of document.querySelectorAll('table.table')) {
    const headings = [];
    for (const th of table.querySelectorAll('thead tr:first-child > th')) {
      const shown = th.querySelector('.visually-hidden') ? '' : th.textContent.trim();
      for (let i = 0; i < th.colSpan; i += 1) headings.push(shown);
    }
    for (const row of table.querySelectorAll('tbody > tr')) {
      let column = 0;
      for (const cell of row.children) {
        // An empty cell (no address, no date) is left without its name too.
        const label = cell.colSpan === 1 && (cell.textContent.trim() || cell.children.length) ? headings[column] : '';
        if (label) cell.setAttribute('data-label', label);
        column += cell.colSpan;
      }
    }
  }
};

// A form refused by the server comes back with its messages: the focus goes to the first field
// it refused (or its message), not to the top of the page.
const focusRefusedField = () => {
  if (document.activeElement && document.activeElement !== document.body) return;
  const field = document.querySelector('main [aria-invalid="true"], main .field.invalid :is(input, select, textarea)');
  const message = document.querySelector('main .flash-error[role="alert"]');
  const target = field ?? message;
  if (!target) return;
  if (!field) target.tabIndex = -1;
  target.focus();
};

const onPage = () => {
  labelTableCells();
  scrollableTables();
  focusRefusedField();
};
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', onPage);
else onPage();
document.addEventListener('htmx:after:swap', onPage);
window.addEventListener('resize', scrollableTables);

// A long form (the composer, an automation step) keeps what was typed in this tab's storage
// until it is sent: a link that leaves it ("Create a group first", the navigation) loses
// nothing, and coming back to the page brings the typing back, with a way to start over.
// A form the server refused is shown with the posted values instead.
const DRAFT_DAYS = 1;
const draftKey = (form) => `draft:${location.pathname}:${form.getAttribute('action') ?? ''}`;
const draftOf = (form) => {
  const values = [];
  for (const el of form.elements) {
    if (!el.name || el.name === '_csrf' || el.type === 'file' || el.type === 'submit' || el.type === 'button' || el.getAttribute('form')) continue;
    if ((el.type === 'checkbox' || el.type === 'radio') && !el.checked) continue;
    values.push([el.name, el.value]);
  }
  return values;
};
const saveDraft = (form) => {
  // Sent: the page that answers shows either the saved record or the refused form's values.
  // Untouched: there is nothing of the person's to keep, and nothing to announce on return.
  if (form.dataset.sent || !form.dataset.typed) return;
  try {
    sessionStorage.setItem(draftKey(form), JSON.stringify({ at: Date.now(), values: draftOf(form) }));
  } catch {
    // Storage full or refused: the form still works, it just keeps nothing.
  }
};
const restoreDraft = (form) => {
  let draft;
  try {
    draft = JSON.parse(sessionStorage.getItem(draftKey(form)) ?? 'null');
  } catch {
    return;
  }
  if (!draft || Date.now() - draft.at > DRAFT_DAYS * 86_400_000) return;
  if (form.querySelector('.field.invalid, [aria-invalid="true"]')) return;
  if (JSON.stringify(draft.values) === JSON.stringify(draftOf(form))) return;
  const byName = new Map();
  for (const [name, value] of draft.values) byName.set(name, [...(byName.get(name) ?? []), value]);
  // The note says something came back only when a field really changed.
  let restored = false;
  for (const el of form.elements) {
    if (!el.name || el.name === '_csrf' || el.type === 'file' || el.type === 'submit' || el.type === 'button' || el.getAttribute('form')) continue;
    const values = byName.get(el.name) ?? [];
    if (el.type === 'checkbox' || el.type === 'radio') {
      const checked = values.includes(el.value);
      if (el.checked !== checked) restored = true;
      el.checked = checked;
    } else if (values.length && el.value !== values[0]) {
      el.value = values[0];
      restored = true;
    }
  }
  // The editor's project travels in a field its script adds later: it starts from the kept one.
  const project = form.querySelector('[data-designer-project]');
  if (project && byName.has('template_json') && project.value !== byName.get('template_json')[0]) {
    project.value = byName.get('template_json')[0];
    restored = true;
  }
  // Kept typing goes on being kept, as if typed again here.
  form.dataset.typed = 'yes';
  if (!restored) return;
  const note = document.createElement('p');
  note.className = 'flash';
  note.setAttribute('role', 'status');
  note.append('What you typed here before leaving the page is back. ');
  const discard = document.createElement('button');
  discard.type = 'button';
  discard.className = 'small';
  discard.textContent = 'Start over';
  discard.addEventListener('click', () => {
    sessionStorage.removeItem(draftKey(form));
    location.reload();
  });
  note.append(discard);
  form.prepend(note);
};
const keepDrafts = () => {
  for (const form of document.querySelectorAll('form[data-keep-draft]')) {
    if (form.dataset.keeping) continue;
    form.dataset.keeping = 'yes';
    restoreDraft(form);
    const typed = () => {
      form.dataset.typed = 'yes';
      saveDraft(form);
    };
    form.addEventListener('input', typed);
    form.addEventListener('change', typed);
    form.addEventListener('submit', () => {
      form.dataset.sent = 'yes';
      sessionStorage.removeItem(draftKey(form));
    });
  }
};
// Leaving by any link (htmx swaps the page without unloading it) or closing the tab saves last.
document.addEventListener('click', (event) => {
  if (!event.target.closest?.('a[href]')) return;
  for (const form of document.querySelectorAll('form[data-keep-draft]')) saveDraft(form);
}, true);
window.addEventListener('pagehide', () => {
  for (const form of document.querySelectorAll('form[data-keep-draft]')) saveDraft(form);
});
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', keepDrafts);
else keepDrafts();
document.addEventListener('htmx:after:swap', keepDrafts);
// Copy buttons (sending domains' DNS records, recovery codes): copy the named field's value and say so.
document.addEventListener('click', async (event) => {
  const button = event.target.closest?.('[data-copy]');
  if (!button) return;
  const field = document.getElementById(button.dataset.copy);
  if (!field) return;
  // A field's value, or the text of a list (recovery codes: one per line).
  const isField = typeof field.select === 'function';
  if (isField) field.select();
  else window.getSelection()?.selectAllChildren(field);
  let copied = false;
  try {
    await navigator.clipboard.writeText(isField ? field.value : field.innerText);
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
