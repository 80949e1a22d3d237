import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';

/**
 * Writes a contacts CSV of `rows` data rows: every reserved column plus two custom fields
 * (`age` number, `joined` datetime-local). `updateEvery` rows repeat an earlier row's email
 * in another case (an update of an existing contact), `invalidEvery` rows carry a broken email.
 */
export async function writeContactsCsv(file: string, rows: number, opts: { updateEvery?: number; invalidEvery?: number } = {}): Promise<void> {
  const updateEvery = opts.updateEvery ?? 10;
  const invalidEvery = opts.invalidEvery ?? 100;
  const countries = ['United States', 'FR', 'Germany', 'IN', '101', 'Brazil', 'Japan', 'GB'];
  const out = fs.createWriteStream(file);
  const header = 'first_name,last_name,email,alt_email,country,state,city,address_line1,address_line2,state_province_region,postal_code,age,joined\n';
  out.write(header);
  let buffer = '';
  for (let i = 0; i < rows; i += 1) {
    let email = `user${i}@example.com`;
    if (i % invalidEvery === invalidEvery - 1) email = `broken-${i}-at-example.com`;
    else if (i % updateEvery === updateEvery - 1 && i > updateEvery) email = `USER${i - updateEvery * 3 - 1 > 0 ? i - updateEvery * 3 - 1 : 0}@Example.com`;
    const day = String(1 + (i % 28)).padStart(2, '0');
    buffer += `First${i},"Last, ${i % 1000}",${email},,${countries[i % countries.length]},State ${i % 50},City ${i % 500},${i} Main Street,,Region,${10000 + (i % 89999)},${i % 90},2025-${String(1 + (i % 12)).padStart(2, '0')}-${day}T09:30\n`;
    if (buffer.length > 1 << 16) {
      if (!out.write(buffer)) await once(out, 'drain');
      buffer = '';
    }
  }
  out.end(buffer);
  await once(out, 'finish');
}

/** Writes a contacts CSV into a temporary folder, hands its path to `use`, and always removes it. */
export async function withContactsCsv(
  rows: number,
  opts: { updateEvery?: number; invalidEvery?: number },
  use: (file: string) => Promise<void>,
): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-contacts-'));
  try {
    const file = path.join(dir, 'contacts.csv');
    await writeContactsCsv(file, rows, opts);
    await use(file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The other files `bench:import` uploads: a Mailchimp-style export with a mapping, and a European Excel file. */
export type ImportStyle = 'mailchimp' | 'windows-1252';

/**
 * Writes `rows` data rows in a style: `mailchimp` is a subscribed-members export (quoted
 * headers, MEMBER_RATING mapped to the `age` custom field, the rest by alias or ignored);
 * `windows-1252` is `E-mail;First name;Surname;Zip;City` with accented names, in Windows-1252.
 * Answers the upload's extra fields (the mapping).
 */
export async function writeStyledCsv(file: string, rows: number, style: ImportStyle): Promise<Record<string, string>> {
  const iconv = await import('iconv-lite');
  const out = fs.createWriteStream(file);
  const encode = (text: string) => (style === 'windows-1252' ? iconv.encode(text, 'windows-1252') : Buffer.from(text));
  out.write(
    encode(
      style === 'mailchimp'
        ? '"Email Address","First Name","Last Name",Address,"Phone Number",MEMBER_RATING,OPTIN_TIME,CONFIRM_TIME,LATITUDE,LONGITUDE,CC,REGION,LAST_CHANGED,LEID,EUID,NOTES,TAGS\n'
        : 'E-mail;First name;Surname;Zip;City\r\n',
    ),
  );
  let buffer = '';
  for (let i = 0; i < rows; i += 1) {
    buffer +=
      style === 'mailchimp'
        ? `member${i}@example.com,José${i},"García ${i % 1000}","${i} Main St  Springfield  IL  62701  US",555-0100,${i % 5},"2023-01-05 10:00:00","2023-01-05 10:01:12",39.78,-89.65,US,IL,"2024-03-01 09:00:00",${100000 + i},e${i},,"""Newsletter"""\n`
        : `kunde${i}@example.de;Jörg${i};Weiß ${i % 1000};${10000 + (i % 89999)};Köln\r\n`;
    if (buffer.length > 1 << 16) {
      if (!out.write(encode(buffer))) await once(out, 'drain');
      buffer = '';
    }
  }
  out.end(encode(buffer));
  await once(out, 'finish');
  return style === 'mailchimp' ? { 'mapping[MEMBER_RATING]': 'age', 'mapping[Phone Number]': 'ignore' } : {};
}
