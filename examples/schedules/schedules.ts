// Sets up preventive maintenance for a generator with @work-order-api/client: "every 500 engine hours
// or 6 months, whichever first" (docs/schedules.md). It creates a cumulative meter and a schedule with
// a meter trigger and a calendar trigger, prints the schedule's preview, sends the engine's readings
// past 500 hours and prints the work order they generated. Run it again: it finds what it made (by
// name), the readings are duplicates by their externalId, and nothing more is created.
//
//   WO_URL=http://127.0.0.1:8080 WO_API_KEY=wo_… node --import tsx examples/schedules/schedules.ts
//
// The key needs schedules:read, schedules:write, categories:write and records:read. WO_CATEGORY_ID
// (cat_…) uses a category you have instead of creating one.
import { createClient, isProblem, type Schemas, type WorkOrderClient } from '@work-order-api/client';

export const CATEGORY_NAME = 'Preventive maintenance';
export const METER_NAME = 'Generator G1 engine hours';
export const SCHEDULE_NAME = 'Generator G1 engine service';
const TIMEZONE = 'Europe/Berlin';

/** What the engine's controller logged: a cumulative hour counter, past 500 at the last one. */
export const ENGINE_LOG = [
  { value: 131.5, externalId: 'g1-ecu-000038', hoursAgo: 72 },
  { value: 262, externalId: 'g1-ecu-000039', hoursAgo: 48 },
  { value: 389.25, externalId: 'g1-ecu-000040', hoursAgo: 24 },
  { value: 512, externalId: 'g1-ecu-000041', hoursAgo: 0 },
];

type Schedule = Schemas['Schedule'];
type Meter = Schemas['Meter'];

async function findByName<T extends { name: string }>(items: AsyncIterable<T>, name: string): Promise<T | undefined> {
  for await (const item of items) if (item.name === name) return item;
  return undefined;
}

/** The first day of the month six months from now, 08:00 local time in `TIMEZONE` (no offset). */
function calendarStart(now: Date): string {
  const parts = Object.fromEntries(new Intl.DateTimeFormat('en-CA', { timeZone: TIMEZONE, year: 'numeric', month: 'numeric' }).formatToParts(now).map((p) => [p.type, p.value]));
  const months = Number(parts.year) * 12 + (Number(parts.month) - 1) + 6;
  return `${Math.floor(months / 12)}-${String((months % 12) + 1).padStart(2, '0')}-01T08:00:00`;
}

async function categoryFor(client: WorkOrderClient, given: string | undefined): Promise<{ id: string; how: string }> {
  if (given) return { id: given, how: 'given by WO_CATEGORY_ID' };
  try {
    // A fixed key: a re-run within 24 h is answered the category made by the first, not a 409.
    const { data, replayed } = await client.createCategory.withResponse({ body: { name: CATEGORY_NAME }, idempotencyKey: 'schedules-example:category' });
    return { id: data.id, how: replayed ? 'created by an earlier run' : 'created' };
  } catch (error) {
    if (isProblem(error, 'already_exists')) {
      throw new Error(`a category named "${CATEGORY_NAME}" exists already; pass its id as WO_CATEGORY_ID (the key has no categories:read to look it up)`);
    }
    throw error;
  }
}

export async function setUpEngineService(options: { baseUrl: string; apiKey: string; categoryId?: string; log?: (line: string) => void }): Promise<{ schedule: Schedule; meter: Meter; workOrders: Schemas['Record'][] }> {
  const log = options.log ?? console.log;
  const client = createClient({ baseUrl: options.baseUrl, apiKey: options.apiKey });

  // 1. The schedule, if an earlier run made it: it names its meter and its category.
  let schedule = await findByName(client.listSchedules.all(), SCHEDULE_NAME);
  let meter: Meter;
  if (schedule) {
    const meterId = schedule.triggers.find((t) => t.type === 'meter')?.meterId;
    if (!meterId) throw new Error(`schedule ${schedule.id} "${SCHEDULE_NAME}" has no meter trigger: rename or delete it`);
    meter = await client.getMeter({ path: { id: meterId } });
    log(`category ${schedule.template.categoryId} (the schedule's)`);
    log(`meter ${meter.id} "${meter.name}" (${meter.unit}, ${meter.kind}): already there`);
    log(`schedule ${schedule.id} "${schedule.name}": already there`);
  } else {
    const category = await categoryFor(client, options.categoryId);
    log(`category ${category.id} (${category.how})`);
    const existingMeter = await findByName(client.listMeters.all(), METER_NAME);
    meter = existingMeter ?? (await client.createMeter({ body: { name: METER_NAME, unit: 'h', kind: 'cumulative' }, idempotencyKey: 'schedules-example:meter' }));
    log(`meter ${meter.id} "${meter.name}" (${meter.unit}, ${meter.kind}): ${existingMeter ? 'already there' : 'created'}`);
    if (meter.kind !== 'cumulative') throw new Error(`meter ${meter.id} "${METER_NAME}" is a ${meter.kind} meter; a meter trigger needs a cumulative one`);

    const body = {
      name: SCHEDULE_NAME,
      template: { categoryId: category.id, description: 'Engine service: change the oil, the oil filter and the air filter', address: 'Plant room B, generator G1' },
      // Whichever comes first: 500 engine hours or six months, both counted again from each work order.
      triggers: [
        { type: 'meter' as const, meterId: meter.id, every: 500 },
        { type: 'interval' as const, every: 'P6M', start: calendarStart(new Date()), timezone: TIMEZONE },
      ],
      leadTime: 'P7D',
    };
    // The same key for the same meter: an answer lost on the way (a crash, a time-out) is replayed, not made twice.
    schedule = await client.createSchedule({ body, idempotencyKey: `schedules-example:schedule:${meter.id}` });
    log(`schedule ${schedule.id} "${schedule.name}": created`);
  }

  // 2. The plan's time side, as the preview forecasts it: the interval's first occurrence (meter triggers cannot be forecast).
  const { name, template, triggers, leadTime } = schedule;
  const preview = await client.previewSchedule({ body: { name, template, triggers, leadTime } });
  log(`next occurrences (the six-month interval; the meter trigger fires at 500 h):`);
  for (const occurrence of preview.occurrences.slice(0, 4)) log(`  ${occurrence.key}  due ${occurrence.dueAt}  work order created ${occurrence.generateAt}`);

  // 3. The controller's readings, each with its externalId: sent again, they are duplicates.
  const now = Date.now();
  const readings = ENGINE_LOG.map(({ value, externalId, hoursAgo }) => ({ value, externalId, readAt: new Date(now - hoursAgo * 3_600_000).toISOString() }));
  const result = await client.postMeterReadings({ path: { id: meter.id }, body: { readings } });
  log(`readings: ${readings.length} sent, ${result.accepted} accepted, ${result.duplicates} duplicates; meter at ${result.meter.lastReading?.value ?? 0} ${meter.unit}`);

  // 4. What the schedule generated: the readings' own transaction made it.
  const occurrences = await client.listScheduleOccurrences({ path: { id: schedule.id }, query: { from: schedule.createdAt } });
  for (const occurrence of occurrences.occurrences.filter((o) => o.status !== 'PLANNED')) {
    log(`occurrence ${occurrence.key} ${occurrence.status}${occurrence.recordId ? ` ${occurrence.recordId}` : ''}${occurrence.reason ? ` (${occurrence.reason})` : ''}`);
  }
  const workOrders: Schemas['Record'][] = [];
  for await (const record of client.listRecords.all({ query: { categoryId: schedule.template.categoryId, createdAfter: schedule.createdAt } })) {
    if (record.source?.type === 'schedule' && record.source.scheduleId === schedule.id) workOrders.push(record);
  }
  for (const record of workOrders) {
    log(`work order ${record.id} ${record.status} "${record.description}" due ${record.dueAt}, source ${record.source?.type === 'schedule' ? record.source.occurrence : ''}`);
  }
  log(`work orders from this schedule: ${workOrders.length}`);
  return { schedule, meter, workOrders };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { WO_URL, WO_API_KEY, WO_CATEGORY_ID } = process.env;
  if (!WO_URL || !WO_API_KEY) throw new Error('set WO_URL and WO_API_KEY (a key with schedules:read, schedules:write, categories:write and records:read)');
  await setUpEngineService({ baseUrl: WO_URL, apiKey: WO_API_KEY, ...(WO_CATEGORY_ID ? { categoryId: WO_CATEGORY_ID } : {}) });
}
