/** Row types of the preventive-maintenance tables (migration 0020). JSON columns hold serialized text. */
export interface SchedulesTable {
  id: string;
  org_id: string;
  name: string;
  status: string;
  /** The work-order template (JSON). */
  template: string;
  /** The triggers as given (JSON). */
  triggers: string;
  lead_time: string;
  overlap: string;
  catch_up: string;
  metadata: string;
  /** Each trigger's counting state by position (JSON): a meter trigger's base, a threshold's arming. */
  trigger_state: string;
  /** Time-based occurrences due at or before this instant are decided (generated, skipped or missed). */
  planned_through: string | null;
  /** The next time-based occurrence: when it is due, and its key. */
  next_due_at: string | null;
  next_key: string | null;
  /** When the generator must next look at this schedule (the next occurrence less the lead time); null: nothing time-based to do. */
  generate_at: string | null;
  /** An interval trigger waits for this work order's completion before it plans again. */
  waits_for_record: string | null;
  last_record_id: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

export interface ScheduleOccurrencesTable {
  schedule_id: string;
  key: string;
  org_id: string;
  due_at: string | null;
  status: string;
  record_id: string | null;
  reason: string | null;
  created_at: string;
}

export interface ScheduleMetersTable {
  meter_id: string;
  schedule_id: string;
  org_id: string;
}

declare module '../db/tables.js' {
  interface Tables {
    schedules: SchedulesTable;
    schedule_occurrences: ScheduleOccurrencesTable;
    schedule_meters: ScheduleMetersTable;
  }
}
