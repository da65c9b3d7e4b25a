/** Every scope an API key can hold, with the one-line explanation shown to operators. */
export const SCOPES = {
  'records:read': 'Read work orders, their history and lists.',
  'records:write': 'Create and edit work orders and move them through their lifecycle.',
  'categories:read': 'Read work-order categories.',
  'categories:write': 'Create, rename and delete work-order categories.',
  'assets:read': 'Read assets; listing an asset’s work orders also needs records:read.',
  'assets:write': 'Create, update and retire assets.',
  'locations:read': 'Read locations and their hierarchy.',
  'locations:write': 'Create, update and delete locations.',
  'webhooks:manage': 'Create, change and delete webhook subscriptions; see and replay deliveries.',
  'proofs:read': 'Fetch completion proofs of work orders.',
  'events:read': 'Read the event feed: every event webhooks deliver, to catch up or follow changes without receiving webhooks.',
} as const;

export type Scope = keyof typeof SCOPES;

export const ALL_SCOPES = Object.keys(SCOPES) as Scope[];

export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPES, value);
}
