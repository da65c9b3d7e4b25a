import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { WorkOrderClient } from '@work-order-api/client';
import { METER_NAME, SCHEDULE_NAME } from './schedules.js';
import { itAgainstLiveService } from '../../sdk/test/live-service.js';

const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'schedules.ts');

/** The example as an integrator runs it: its own process, to its end. */
function runExample(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

async function everything(client: WorkOrderClient) {
  const all = async <T>(items: AsyncIterable<T>) => {
    const out: T[] = [];
    for await (const item of items) out.push(item);
    return out;
  };
  return { schedules: await all(client.listSchedules.all()), meters: await all(client.listMeters.all()), records: await all(client.listRecords.all()) };
}

describe('examples/schedules against a real server', () => {
  itAgainstLiveService('sets up 500 engine hours or 6 months, gets one work order at meter:500, and a second run creates nothing more', async ({ client, baseUrl, tenant }) => {
    const env = { WO_URL: baseUrl, WO_API_KEY: tenant.key };
    const first = await runExample(env);
    assert.equal(first.code, 0, first.output);

    const held = await everything(client);
    assert.equal(held.schedules.length, 1);
    const [schedule] = held.schedules;
    assert.equal(schedule!.name, SCHEDULE_NAME);
    assert.equal(held.meters.length, 1);
    const [meter] = held.meters;
    assert.deepEqual([meter!.name, meter!.kind, meter!.lastReading?.value], [METER_NAME, 'cumulative', 512]);
    assert.deepEqual(schedule!.triggers.map((t) => [t.type, t.meterId ?? t.rrule, t.every ?? t.timezone]), [
      ['meter', meter!.id, 500],
      ['interval', undefined, 'P6M'],
    ]);
    assert.equal(held.records.length, 1, 'one work order');
    const [order] = held.records;
    assert.deepEqual(order!.source, { type: 'schedule', scheduleId: schedule!.id, occurrence: 'meter:500' });
    assert.equal((await client.listMeterReadings({ path: { id: meter!.id } })).total, 4);

    // What it printed: what it made, the plan's next occurrence, the readings, the work order.
    const lines = first.output.trimEnd().split('\n');
    assert.match(lines[0]!, /^category cat_\S+ \(created\)$/);
    assert.equal(lines[1], `meter ${meter!.id} "${METER_NAME}" (h, cumulative): created`);
    assert.equal(lines[2], `schedule ${schedule!.id} "${SCHEDULE_NAME}": created`);
    assert.equal(lines[3], 'next occurrences (the six-month interval; the meter trigger fires at 500 h):');
    // An interval counts from a work order that does not exist yet: the preview shows its first occurrence only.
    assert.match(lines[4]!, /^ {2}\d{4}-\d{2}-01T08:00:00 {2}due \d{4}-\d{2}-01T0[67]:00:00\.000Z {2}work order created \S+Z$/);
    assert.equal(lines[5], 'readings: 4 sent, 4 accepted, 0 duplicates; meter at 512 h');
    assert.equal(lines[6], `occurrence meter:500 GENERATED ${order!.id}`);
    assert.equal(lines[7], `work order ${order!.id} OPEN "${order!.description}" due ${order!.dueAt}, source meter:500`);
    assert.equal(lines[8], 'work orders from this schedule: 1');
    assert.equal(lines.length, 9, first.output);

    // Run again: it finds what it made, its readings are duplicates, nothing more is created.
    const second = await runExample(env);
    assert.equal(second.code, 0, second.output);
    const again = second.output.trimEnd().split('\n');
    assert.equal(again[0], `category ${schedule!.template.categoryId} (the schedule's)`);
    assert.equal(again[1], `meter ${meter!.id} "${METER_NAME}" (h, cumulative): already there`);
    assert.equal(again[2], `schedule ${schedule!.id} "${SCHEDULE_NAME}": already there`);
    assert.deepEqual(again.slice(3, 5), lines.slice(3, 5), 'the same plan previewed');
    assert.equal(again[5], 'readings: 4 sent, 0 accepted, 4 duplicates; meter at 512 h');
    assert.deepEqual(again.slice(6), lines.slice(6));
    const after = await everything(client);
    assert.deepEqual(
      [after.schedules.map((s) => s.id), after.meters.map((m) => m.id), after.records.map((r) => r.id)],
      [[schedule!.id], [meter!.id], [order!.id]],
    );
    assert.equal((await client.listMeterReadings({ path: { id: meter!.id } })).total, 4);
  }, { scopes: ['schedules:read', 'schedules:write', 'categories:write', 'records:read'] });
});
