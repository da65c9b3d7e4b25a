/** Row types of the checklists feature (migration 0028; JSON columns are serialized text). */

/** A checklist template at its current version; every version is also in checklist_versions. */
export interface ChecklistsTable {
  id: string;
  org_id: string;
  name: string;
  version: number;
  /** JSON of ChecklistItem[] of the current version. */
  items: string;
  created_at: string;
  updated_at: string;
}

/** One version of a checklist, as work orders given that version keep it. */
export interface ChecklistVersionsTable {
  checklist_id: string;
  version: number;
  org_id: string;
  name: string;
  items: string;
  created_at: string;
}

/** The answer to one item of a checklist a work order was given. */
export interface ChecklistAnswersTable {
  record_id: string;
  checklist_id: string;
  item_key: string;
  org_id: string;
  /** JSON of the value as given. */
  value: string;
  /** 1 for a failed item (pass_fail answered fail, a number outside min–max). */
  failed: number;
  /** Who answered, as history names actors (`api_key:key_…`). */
  answered_by: string;
  answered_at: string;
}

/** The one follow-up work order of a failed item: the primary key makes it one. */
export interface ChecklistFollowUpsTable {
  record_id: string;
  checklist_id: string;
  item_key: string;
  org_id: string;
  follow_up_record_id: string | null;
  created_at: string;
}

declare module '../db/tables.js' {
  interface Tables {
    checklists: ChecklistsTable;
    checklist_versions: ChecklistVersionsTable;
    checklist_answers: ChecklistAnswersTable;
    checklist_follow_ups: ChecklistFollowUpsTable;
  }
}
