import path from 'node:path';
import { parseArgs } from 'node:util';
import { createDb } from './db';
import { migrateAndSeed, migrateOne, MIGRATION_NAMES } from './migrate';
import { loadConfig } from './config';
import { createAccountsService } from './services/accounts/accounts';
import { ValidationError } from './lib/errors';
import { existingAppSecret } from './services/accounts/app-secret';
import { writeBackup } from './services/operations/backup';
import { restoreBackup, RestoreRefused } from './services/operations/restore';

const USAGE = [
  'usage: npm run --silent cli -- account:create --email EMAIL [--name NAME] [--password PW] [--json]',
  '       npm run --silent cli -- backup --out FILE',
  '       npm run --silent cli -- restore --in FILE',
].join('\n');

async function accountCreate(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      email: { type: 'string' },
      name: { type: 'string' },
      password: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  if (!values.email) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const config = loadConfig();
  const db = createDb(config);
  try {
    await migrateAndSeed(db);
    // Only the accounts service: the CLI sends no mail, so it builds no mail transport.
    const accounts = createAccountsService({ db, config });
    const created = await accounts.create({ email: values.email, name: values.name, password: values.password, starter: true });
    if (values.json) {
      process.stdout.write(JSON.stringify(created) + '\n');
    } else {
      process.stdout.write(
        [
          `account ${created.user_id} created for ${created.email}`,
          `PublicKey: ${created.public_key}`,
          `SecretKey: ${created.secret_key}`,
          ...(created.password ? [`password:  ${created.password}`] : []),
        ].join('\n') + '\n',
      );
    }
    return 0;
  } catch (err) {
    if (err instanceof ValidationError) {
      process.stderr.write(`${Object.values(err.fields).flat().join(' ')}\n`);
      return 1;
    }
    throw err;
  } finally {
    await db.destroy();
  }
}

/** Writes a consistent snapshot of the database named by DATABASE_URL / SQLITE_FILE to FILE, while the service runs. */
async function backup(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { out: { type: 'string' } } });
  if (!values.out) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const config = loadConfig();
  const secret = existingAppSecret(config.appSecret, config.appSecretFile);
  if (!secret) {
    process.stderr.write(`backup refused: no app secret found (APP_SECRET is unset and ${config.appSecretFile} does not exist); the backup is signed with it. Run the backup with the service's settings (its APP_SECRET, or its DATA_DIR / SQLITE_FILE).\n`);
    return 1;
  }
  const db = createDb(config);
  try {
    const done = await writeBackup(db, path.resolve(values.out), secret);
    process.stdout.write(`backup of ${done.tables} tables, ${done.rows} rows (schema ${done.schema}) written to ${values.out}\n`);
    return 0;
  } finally {
    await db.destroy();
  }
}

/** Loads FILE into the empty database named by DATABASE_URL / SQLITE_FILE; a refusal is one line and exit code 1. */
async function restore(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { in: { type: 'string' } } });
  if (!values.in) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const config = loadConfig();
  const secret = existingAppSecret(config.appSecret, config.appSecretFile);
  if (!secret) {
    process.stderr.write(`restore refused: this install has no app secret (APP_SECRET is unset and ${config.appSecretFile} does not exist). The backup is signed with the app secret of the install that wrote it, and the secrets in it are sealed with it: set APP_SECRET to it, or copy that install's secret file to ${config.appSecretFile}.\n`);
    return 1;
  }
  const db = createDb(config);
  try {
    const done = await restoreBackup({ db, appSecret: secret, migrationNames: MIGRATION_NAMES, migrateOne, finish: migrateAndSeed }, path.resolve(values.in));
    process.stdout.write(`restored ${done.tables} tables, ${done.rows} rows (schema ${done.schema}) into ${done.target}; row counts checked\n`);
    return 0;
  } catch (err) {
    if (err instanceof RestoreRefused) {
      process.stderr.write(`restore refused: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    await db.destroy();
  }
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'account:create':
      return accountCreate(rest);
    case 'backup':
      return backup(rest);
    case 'restore':
      return restore(rest);
    default:
      process.stderr.write(`${USAGE}\n`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${(err instanceof Error ? err.message : String(err)).split('\n')[0].slice(0, 500)}\n`);
    process.exit(1);
  },
);
