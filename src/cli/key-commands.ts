import { createContext } from '../context.js';
import { expiryFromDuration } from '../keys/api-keys.js';
import { FEATURE_REGISTRY } from '../features.js';
import { parseOptions, UsageError, type CliCommand } from './command.js';
import { CLI_ACTOR, quietLogger } from './org-commands.js';

export const keysCreateCommand: CliCommand = {
  path: ['keys', 'create'],
  usage: 'keys create --org <id|name> --scopes a,b [--name n] [--expires-in 90d] [--json]',
  summary: 'Create an API key; its value is printed once.',
  details: () =>
    [
      'scopes (--scopes, comma-separated):',
      ...FEATURE_REGISTRY.scopes.all.map((scope) => `  ${scope.padEnd(18)} ${FEATURE_REGISTRY.scopes.descriptions[scope]}`),
      '',
      '--expires-in: 30m, 12h, 90d or 4w (at most 10 years); without it the key does not expire.',
    ].join('\n'),
  async run(args, config, io) {
    const { values } = parseOptions(
      args,
      { org: { type: 'string' }, scopes: { type: 'string' }, name: { type: 'string' }, 'expires-in': { type: 'string' }, json: { type: 'boolean' } },
      false,
    );
    if (!values.org) throw new UsageError('--org is required');
    if (!values.scopes) throw new UsageError('--scopes is required (comma-separated)');
    const context = await createContext(config, { logger: quietLogger(config) });
    try {
      const org = await context.organizations.find(values.org);
      // The key and its audit entry in one transaction, as the admin area makes them (undefined only
      // answers a repeated submission id, and the CLI passes none).
      const { apiKey, key } = (await context.admin.createApiKey(
        CLI_ACTOR,
        {
          orgId: org.id,
          name: values.name ?? 'cli',
          scopes: values.scopes.split(',').map((s) => s.trim()).filter(Boolean),
          expiresAt: values['expires-in'] ? expiryFromDuration(values['expires-in'], context.clock) : null,
          createdBy: 'cli',
        },
        null,
      ))!;
      if (values.json) io.out(JSON.stringify({ id: apiKey.id, key, scopes: apiKey.scopes, orgId: apiKey.orgId }));
      else {
        io.out(`created API key ${apiKey.id} for ${org.name} with scopes ${apiKey.scopes.join(', ')}`);
        io.out(`key (shown once, store it now): ${key}`);
      }
    } finally {
      await context.close();
    }
    return 0;
  },
};

export const keysListCommand: CliCommand = {
  path: ['keys', 'list'],
  usage: 'keys list [--org <id|name>] [--json]',
  summary: 'List API keys (never their values).',
  async run(args, config, io) {
    const { values } = parseOptions(args, { org: { type: 'string' }, json: { type: 'boolean' } }, false);
    const context = await createContext(config, { logger: quietLogger(config) });
    try {
      const orgId = values.org ? (await context.organizations.find(values.org)).id : undefined;
      const keys = await context.apiKeys.list(orgId);
      if (values.json) io.out(JSON.stringify(keys));
      else
        for (const k of keys) {
          io.out(`${k.id}  ${k.prefix}…  ${k.state.padEnd(7)}  ${k.orgId}  ${k.name}  [${k.scopes.join(',')}]  last used ${k.lastUsedAt ?? 'never'}`);
        }
    } finally {
      await context.close();
    }
    return 0;
  },
};

export const keysRevokeCommand: CliCommand = {
  path: ['keys', 'revoke'],
  usage: 'keys revoke <id> [--json]',
  summary: 'Revoke an API key; it stops working at once.',
  async run(args, config, io) {
    const { values, positionals } = parseOptions(args, { json: { type: 'boolean' } });
    const id = positionals[0];
    if (!id || positionals.length > 1) throw new UsageError('give exactly one key id');
    const context = await createContext(config, { logger: quietLogger(config) });
    try {
      const key = await context.apiKeys.revoke(id);
      await context.admin.audit(CLI_ACTOR, 'api_key.revoked', { target: key.id, orgId: key.orgId, details: { name: key.name, prefix: key.prefix } });
      io.out(values.json ? JSON.stringify(key) : `revoked ${key.id} at ${key.revokedAt}`);
    } finally {
      await context.close();
    }
    return 0;
  },
};
