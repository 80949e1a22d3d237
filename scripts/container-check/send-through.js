// Drives a running web container through the API the way a user would, for
// scripts/test-container.sh: a sender verified by the link of its mail, a contact, and a single
// send due now; then waits until the worker's message to that contact is in the sink's folder.
// Arguments: <base url> <public key> <secret key> <sink folder>. Exit 0 when the message arrived.
const fs = require('node:fs');
const path = require('node:path');

const [baseUrl, publicKey, secretKey, folder] = process.argv.slice(2);
const headers = { PublicKey: publicKey, SecretKey: secretKey, 'Content-Type': 'application/json', Accept: 'application/json' };

async function api(method, route, body) {
  const res = await fetch(`${baseUrl}/api/v1${route}`, { method, headers, body: body ? JSON.stringify(body) : undefined });
  const json = await res.json().catch(() => ({}));
  if (!res.ok || json.status === 'error') throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
  return json.message;
}

function received() {
  return fs.readdirSync(folder).filter((f) => f.endsWith('.json')).map((f) => JSON.parse(fs.readFileSync(path.join(folder, f), 'utf8')));
}

async function until(what, find, seconds) {
  const end = Date.now() + seconds * 1000;
  for (;;) {
    const found = find();
    if (found) return found;
    if (Date.now() > end) throw new Error(`no ${what} in the sink after ${seconds} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function main() {
  const stamp = Date.now().toString(36);
  const place = await api('GET', '/get/country-state-city');
  const country = place.countries.find((c) => c.iso2 === 'DE') ?? place.countries[0];
  await api('POST', '/sender/save', {
    from_name: 'Container check',
    from_email: `news-${stamp}@example.com`,
    reply_to_email: `reply-${stamp}@example.com`,
    country_id: country.id,
    company_address: '1 Main Street',
    nickname: `check-${stamp}`,
  });
  const sender = (await api('GET', '/senders')).senders.find((s) => s.nickname === `check-${stamp}`);
  const verification = await until('verification mail', () => received().find((m) => m.to.includes(`news-${stamp}@example.com`)), 30);
  const link = /https?:\/\/\S+\/verify-sender\/\S+/.exec(verification.text)?.[0];
  if (!link) throw new Error(`no verification link in: ${verification.text.slice(0, 300)}`);
  const verified = await fetch(link);
  if (verified.status !== 200) throw new Error(`the verification link answered ${verified.status}`);

  await api('POST', '/unsubscribes-groups/save', { group_name: `Check ${stamp}`, description: 'Container check', is_display: 1 });
  const group = (await api('GET', '/unsubscribes-groups')).unsubscribesGroups.find((g) => g.group_name === `Check ${stamp}`);
  const type = (await api('GET', '/contacts-type')).contactTypes[0];
  const to = `reader-${stamp}@example.org`;
  await api('POST', '/contacts/add', { contact_type_id: type.id, email: to, first_name: 'Reader', country: country.id });
  await api('POST', '/single/send/create', {
    template_id: 2,
    sender_id: sender.id,
    unsubscribe_group_id: group.id,
    single_send_name: `Check ${stamp}`,
    subject: `Hello from the container ${stamp}`,
    preheader: 'A check',
    recipient_id: [`contacts_${type.id}`],
    schedule_type: 0,
  });
  const message = await until('single send message', () => received().find((m) => m.to.includes(to)), 90);
  if (message.subject !== `Hello from the container ${stamp}`) throw new Error(`unexpected subject "${message.subject}"`);
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  },
);
