import type { AppContext } from '../context.js';
import { ADMIN_PREFIX } from './security.js';

/**
 * At start, when no administrator exists yet, prints a one-time link that creates the first one.
 * @NOTE: only the hash of the token is stored; the link dies when used, after an hour, or once any
 * administrator exists (`wo admin create-user`). Each start prints a fresh link.
 */
export async function announceAdminSetupLink(context: AppContext): Promise<string | undefined> {
  const token = await context.admin.issueSetupTokenIfNoUsers();
  if (!token) return undefined;
  const setupUrl = `${context.config.publicUrl}${ADMIN_PREFIX}/setup?token=${token}`;
  context.logger.warn(
    { setupUrl },
    `No administrator exists yet. Open this one-time link within an hour to create the first one (or run \`npx wo admin create-user --email …\` in the service's directory): ${setupUrl}`,
  );
  return setupUrl;
}
