/**
 * Who a change is made by. An API key acts for an integrator; the service itself acts for a
 * schedule, an intake form or an access link, and says so in history and proofs
 * (`schedule:sch_…`, `intake:itk_…`, `link:lnk_…`).
 */
export const ACTOR_TYPES = ['api_key', 'schedule', 'intake', 'link'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

export interface Actor {
  readonly type: ActorType;
  /** The id of the key, schedule, intake link or access link (its prefix says which). */
  readonly id: string;
  /**
   * Whom a system actor acts for, as history and proofs name it: an access link's vendor or person
   * ("Acme Plumbing"), recorded with the id as it was then. Absent for API keys.
   */
  readonly name?: string;
}

/** Who is calling: the organization a request or job acts in, with what scopes, as whom. */
export interface Principal {
  /**
   * The id recorded as the actor of what this principal writes: the API key's id, or the system
   * actor's (`sch_…`, `itk_…`, `lnk_…`). Rate limits and key last-use read it for API keys only.
   */
  readonly keyId: string;
  readonly orgId: string;
  readonly scopes: ReadonlySet<string>;
  readonly actor: Actor;
}

/** Id prefixes of the actors; ids are prefixed (src/ids.ts), so the stored id alone says who acted. */
const ACTOR_TYPE_BY_PREFIX: Readonly<Record<string, ActorType>> = { key: 'api_key', sch: 'schedule', itk: 'intake', lnk: 'link' };

/** The actor a stored id names (history rows keep only the id). */
export function actorOf(id: string, name?: string | null): Actor {
  const type = ACTOR_TYPE_BY_PREFIX[id.slice(0, id.indexOf('_'))] ?? 'api_key';
  return name ? { type, id, name } : { type, id };
}

/** How proof statements and logs name an actor: `api_key:key_…`, `schedule:sch_…`. */
export function actorName(actor: Actor): string {
  return `${actor.type}:${actor.id}`;
}

/**
 * The service acting on its own behalf in one organization: a schedule generating a work order, an
 * intake form filing a request, an access link's holder starting a job. It holds every scope, since
 * what it may do is decided by the code that builds it, not by a key an integrator chose.
 * @NOTE: never built from anything a request sends; only jobs and the public pages' own handlers make one.
 */
export function systemPrincipal(orgId: string, actor: Actor & { type: Exclude<ActorType, 'api_key'> }): Principal {
  return { keyId: actor.id, orgId, scopes: ALL_SCOPES_GRANTED, actor };
}

/** A set that holds every scope, present and future. */
const ALL_SCOPES_GRANTED: ReadonlySet<string> = new (class extends Set<string> {
  override has(): boolean {
    return true;
  }
})();
