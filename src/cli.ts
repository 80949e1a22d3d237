import { parseArgs } from 'node:util';
import { createDb } from './db';
import { migrateAndSeed } from './migrate';
import { loadConfig } from './config';
import { createAccountsService } from './services/accounts/accounts';
import { ValidationError } from './lib/errors';

const USAGE = `usage: npm run --silent cli -- account:create --email EMAIL [--name NAME] [--password PW] [--json]`;

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
    const created = await accounts.create({ email: values.email, name: values.name, password: values.password });
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

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'account:create':
      return accountCreate(rest);
    default:
      process.stderr.write(`${USAGE}\n`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
