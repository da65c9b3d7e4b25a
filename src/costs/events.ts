import { Type } from '@sinclair/typebox';
import { StringEnum } from '../http/schema-types.js';
import { MoneySchema } from '../money/schema.js';
import { COST_KINDS } from './schemas.js';
import type { EventDefinition } from '../events/catalogue.js';

/** The events this feature emits, with their payload schemas (assembled into the catalogue from src/features.ts). */
export const COST_EVENTS = {
  'record.cost_added': {
    description:
      'A cost line was added to a work order: labor (POST /records/{id}/labor), a part used (POST /records/{id}/parts), another cost (POST /records/{id}/costs), or a reversing line (POST /cost-lines/{id}/reverse, with a negative amount). Its work order’s `costs` already count it.',
    payload: Type.Object({
      recordId: Type.String(),
      costLineId: Type.String({ description: 'The line (`lab_…`, `pln_…`, `cst_…`), as GET /cost-lines lists it.' }),
      kind: StringEnum(COST_KINDS),
      amount: Type.Object(MoneySchema.properties, { additionalProperties: false, description: 'What the line costs; negative on a reversing line.' }),
    }),
  },
} as const satisfies Record<string, EventDefinition>;

declare module '../events/catalogue.js' {
  interface EventCatalogue extends Record<keyof typeof COST_EVENTS, EventDefinition> {}
}
