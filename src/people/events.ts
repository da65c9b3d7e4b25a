import { Type, type TSchema } from '@sinclair/typebox';
import { AccessLinkSchema, PersonSchema, TeamSchema, VendorSchema } from './schemas.js';
import type { EventDefinition } from '../events/catalogue.js';

const Changes = Type.Record(Type.String(), Type.Object({ from: Type.Unknown(), to: Type.Unknown() }));

/** created, updated and deleted of one kind of the directory. */
function lifecycleEvents<K extends string>(kind: K, noun: string, schema: TSchema, deleted: string) {
  const idKey = `${kind}Id`;
  return {
    [`${kind}.created`]: { description: `A ${noun} was created.`, payload: Type.Object({ [idKey]: Type.String(), [kind]: schema }) },
    [`${kind}.updated`]: {
      description: `A ${noun} changed (PATCH; deactivation included). \`changes\` holds each changed field with its previous (\`from\`) and new (\`to\`) value.`,
      payload: Type.Object({ [idKey]: Type.String(), changes: Changes, [kind]: schema }),
    },
    [`${kind}.deleted`]: { description: `A ${noun} was deleted; \`${kind}\` is its last state. ${deleted}`, payload: Type.Object({ [idKey]: Type.String(), [kind]: schema }) },
  } as Record<`${K}.${'created' | 'updated' | 'deleted'}`, EventDefinition>;
}

/** The events this feature emits, with their payload schemas (assembled into the catalogue from src/features.ts). */
export const PEOPLE_EVENTS = {
  ...lifecycleEvents('person', 'person', PersonSchema, 'They left every team they were in (each emits team.updated).'),
  ...lifecycleEvents('team', 'team', TeamSchema, 'Its members stay.'),
  ...lifecycleEvents('vendor', 'vendor', VendorSchema, 'Its access links stop working.'),
  'record.access_link_created': {
    description: 'An access link to a work order’s job page was made for a vendor or person (POST /records/{id}/access-links). The token is not in it.',
    payload: Type.Object({ recordId: Type.String(), accessLink: AccessLinkSchema }),
  },
  'record.access_link_revoked': {
    description: 'An access link was revoked (DELETE /records/{id}/access-links/{linkId}): its job page answers 404 from now on, on every process.',
    payload: Type.Object({ recordId: Type.String(), accessLink: AccessLinkSchema }),
  },
} as const satisfies Record<string, EventDefinition>;

declare module '../events/catalogue.js' {
  interface EventCatalogue extends Record<keyof typeof PEOPLE_EVENTS, EventDefinition> {}
}
