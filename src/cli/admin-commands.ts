import { createContext } from '../context.js';
import { parseOptions, UsageError, type CliCommand } from './command.js';
import { CLI_ACTOR, quietLogger } from './org-commands.js';

export const adminCreateUserCommand: CliCommand = {
  path: ['admin', 'create-user'],
  usage: 'admin create-user --email <email> [--json]   (password on stdin)',
  summary: 'Create an administrator of the /admin area; the password is read from standard input.',
  async run(args, config, io) {
    const { values } = parseOptions(args, { email: { type: 'string' }, json: { type: 'boolean' } }, false);
    if (!values.email) throw new UsageError('--email is required');
    // @NOTE: the password comes from stdin, never argv (argv is visible to every user in `ps`).
    // Only the final line break is dropped, so passwords may begin or end with spaces.
    const password = (await io.readStdin()).replace(/\r?\n$/, '');
    if (password === '') throw new UsageError('pipe the password on standard input, e.g. `printf %s "$PASSWORD" | npx wo admin create-user --email …`');
    const context = await createContext(config, { logger: quietLogger(config) });
    try {
      const user = await context.admin.createUser(values.email, password, CLI_ACTOR);
      io.out(values.json ? JSON.stringify(user) : `created administrator ${user.id} (${user.email}); sign in at ${config.publicUrl}/admin`);
    } finally {
      await context.close();
    }
    return 0;
  },
};
