import type { Tx } from './database.js';
import { errors } from '../errors.js';

/**
 * A check another feature registers on a resource's delete, run inside the delete's transaction:
 * it answers what still refers to the resource (the message of the 409), or undefined.
 */
export type DeleteGuard = (tx: Tx, orgId: string, id: string) => Promise<string | undefined>;

/**
 * The checks of one resource's delete (categories, assets, locations), so that a feature referring
 * to it (a schedule's template) can refuse the delete without the resource knowing of it.
 */
export class DeleteGuards {
  private readonly guards: DeleteGuard[] = [];

  register(guard: DeleteGuard): void {
    this.guards.push(guard);
  }

  /** 409 resource_in_use with the first guard's reason. */
  async assertUnused(tx: Tx, orgId: string, id: string): Promise<void> {
    for (const guard of this.guards) {
      const reason = await guard(tx, orgId, id);
      if (reason !== undefined) throw errors.inUse(reason);
    }
  }
}
