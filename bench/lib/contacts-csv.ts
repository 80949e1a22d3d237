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
