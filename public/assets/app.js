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
