import { destination, pino } from 'pino';
import type { Config } from '../config.js';
import { createContext } from '../context.js';
import { parseOptions, UsageError, type CliCommand } from './command.js';

/** Who the admin area's audit log names for what the CLI does (docs/admin.md). */
export const CLI_ACTOR = { userId: null, email: 'cli' } as const;

export const orgsCreateCommand: CliCommand = {
  path: ['orgs', 'create'],
  usage: 'orgs create <name> [--currency EUR] [--json]',
  summary: 'Create an organization; --currency is the ISO 4217 code of its amounts (default USD, fixed for its life).',
  async run(args, config, io) {
    const { values, positionals } = parseOptions(args, { json: { type: 'boolean' }, currency: { type: 'string' } });
    const name = positionals.join(' ').trim();
    if (!name) throw new UsageError('the organization needs a name');
    const context = await createContext(config, { logger: quietLogger(config) });
    try {
      const org = await context.organizations.create(name, values.currency === undefined ? {} : { currency: values.currency });
      await context.admin.audit(CLI_ACTOR, 'organization.created', { target: org.id, orgId: org.id, details: { name: org.name, currency: org.currency } });
      io.out(values.json ? JSON.stringify(org) : `created organization ${org.id} (${org.name}, ${org.currency})`);
    } finally {
      await context.close();
    }
    return 0;
  },
};

export const orgsListCommand: CliCommand = {
  path: ['orgs', 'list'],
  usage: 'orgs list [--json]',
  summary: 'List organizations.',
  async run(args, config, io) {
    const { values } = parseOptions(args, { json: { type: 'boolean' } }, false);
    const context = await createContext(config, { logger: quietLogger(config) });
    try {
      const orgs = await context.organizations.list();
      if (values.json) io.out(JSON.stringify(orgs));
      else for (const org of orgs) io.out(`${org.id}  ${org.createdAt}  ${org.name}`);
    } finally {
      await context.close();
    }
    return 0;
  },
};


/** CLI commands print their own results; only warnings and errors from the service go to stderr. */
export function quietLogger(config: Config) {
  return pino({ level: config.logLevel === 'silent' ? 'silent' : 'warn' }, destination(2));
}
