import type { Static, TSchema } from '@sinclair/typebox';

/**
 * A realistic body, shown in the document under its name in the `examples` of each media type that
 * uses its schema: the API reference offers it to copy, and "Try it out" sends it as it is. A request
 * example that names another resource (a category, an asset) says in `description` which earlier
 * answer that id comes from.
 */
export interface NamedExample<T = unknown> {
  readonly summary: string;
  readonly description?: string;
  readonly value: T;
}

/** The named examples of one named schema (`$id`). */
export interface SchemaExamples {
  readonly schemaId: string;
  readonly examples: Readonly<Record<string, NamedExample>>;
}

/** Examples of a named schema, checked against its type where they are written. */
export function examplesOf<T extends TSchema>(schema: T, examples: Record<string, NamedExample<Static<T>>>): SchemaExamples {
  if (!schema.$id) throw new Error('examplesOf needs a schema with an $id');
  return { schemaId: schema.$id, examples };
}

/**
 * The ids the examples share, so that they tell one story: the category the work order example
 * names is the one the category example answers, and so on. The test of the examples creates each
 * resource from its example and uses the id it is answered in place of these.
 */
export const EXAMPLE_IDS = {
  category: 'cat_01M8TGT63TVYZFDPFYX0ES2QCT',
  site: 'loc_01M8TGT63XNKE9A33N2CAPZZMK',
  building: 'loc_01M8TGT640KMXG87T6SA620NN0',
  boiler: 'ast_01M8TGT644KPPHQWCPE3B8XA52',
  record: 'rec_01M8TGT66B5T35ATMCVERCFDDH',
  secondRecord: 'rec_01M8TGT66DCKZ5S9GR8HS8X20M',
  runHours: 'mtr_01M8TGT648M92FM5PXMK5E0TQJ',
  reading: 'rdg_01M8TGT64G2Z8K1DDP84W0VWCP',
  secondReading: 'rdg_01M8TGT64G2Z8K1DDP84W0VWCQ',
  schedule: 'sch_01M8TGT65QAZ9STQ9YF5YNBN34',
  webhook: 'whk_01M8TGT64CD2VDYQ2Y2P4FQDKF',
  delivery: 'dlv_01M8TGT6QF5Y26483DC8W25KH7',
  event: 'evt_01M8TGT66B5T35ATMCVERCFDDK',
  comment: 'cmt_01M8TGT66VY5QDJAJMYA7J8VZQ',
  attachment: 'file_01M8TGT69RXNXCH2PK95GDKQZC',
  proof: 'prf_01M8TGT6B3ZQ2R3NPN2RY9TJRJ',
  request: 'req_01M8TGT6SJNC64Z28GKX18SF22',
  workRequest: 'wrq_01M8TGT6D4N7Q2W5R8T1XKB6MZ',
  intakeLink: 'itk_01M8TGT6D9P3S6V9Y2B5EHK8QT',
  apiKey: 'key_01M8TGT5YRN1BC2XTH77V66T9N',
  vendor: 'vnd_01M8TGT5ZK3W6QH2D9RJ7XBN4A',
  person: 'per_01M8TGT5ZP8C2Y4F6HKM9TRV3E',
  team: 'tem_01M8TGT5ZT5N7B3G8JWQ2XDF6K',
  accessLink: 'lnk_01M8TGT67A4H9EX3KQ2W7NTB5R',
  part: 'prt_01M8TGT68C3V5N7Q9S1T3W5Y7A',
  movement: 'stm_01M8TGT68F2H4K6M8P0R2T4V6X',
  labor: 'lab_01M8TGT68J1B3D5F7H9K1M3P5R',
  partLine: 'pln_01M8TGT68M0A2C4E6G8J0L2N4Q',
  otherCost: 'cst_01M8TGT68Q9Z1B3D5F7H9K1M3P',
  checklist: 'chk_01M8TGT67F2QW8N4C6RJ5XKB9D',
  followUp: 'rec_01M8TGT6C7K2R9W3N5P8XDQ4MT',
  customField: 'cfd_01M8TGT67J5R8X2M4Q7W9NCB3E',
  signature: 'file_01M8TGT69T4K7N2W5R8X3QDB6M',
} as const;
