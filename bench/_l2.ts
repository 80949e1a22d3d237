import { withContactsCsv } from './lib/contacts-csv';
import { importLimit } from './lib/_il2';
const ROWS = Number(process.env.BENCH_ROWS ?? 200000);
withContactsCsv(ROWS, {}, async (csv) => { const l = await importLimit('sqlite', csv, ROWS); console.log(Math.round(l.rowsPerSecond)); });
