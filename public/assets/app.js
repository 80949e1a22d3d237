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
