import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { planOccurrences, type UpcomingOccurrence } from './planner.js';

const NOW = '2027-03-10T12:00:00.000Z';
const occ = (day: number): UpcomingOccurrence => ({ key: `2027-03-${String(day).padStart(2, '0')}T08:00:00`, dueAt: `2027-03-${String(day).padStart(2, '0')}T07:00:00.000Z` });
const kinds = (decisions: ReturnType<typeof planOccurrences>) => decisions.map((d) => `${d.occurrence.key.slice(8, 10)}:${d.kind}${'reason' in d ? `(${d.reason})` : ''}`);

describe('planning the occurrences that came up', () => {
  it('generates an occurrence that came up on time (not yet due)', () => {
    assert.deepEqual(kinds(planOccurrences({ upcoming: [occ(17)], now: NOW, catchUp: 'latest', overlap: 'skip', previousOpen: false })), ['17:generate']);
  });

  it('with catchUp latest generates the last missed occurrence and records the earlier ones MISSED', () => {
    const decisions = planOccurrences({ upcoming: [occ(7), occ(8), occ(9), occ(17)], now: NOW, catchUp: 'latest', overlap: 'create', previousOpen: false });
    assert.deepEqual(kinds(decisions), ['07:miss(catch_up_latest)', '08:miss(catch_up_latest)', '09:generate', '17:generate']);
  });

  it('with catchUp all generates every missed occurrence, and with none generates none of them', () => {
    assert.deepEqual(kinds(planOccurrences({ upcoming: [occ(7), occ(8)], now: NOW, catchUp: 'all', overlap: 'create', previousOpen: false })), ['07:generate', '08:generate']);
    assert.deepEqual(kinds(planOccurrences({ upcoming: [occ(7), occ(8), occ(17)], now: NOW, catchUp: 'none', overlap: 'create', previousOpen: false })), [
      '07:miss(catch_up_none)',
      '08:miss(catch_up_none)',
      '17:generate',
    ]);
  });

  it('with overlap skip records an occurrence SKIPPED while the previous work order is open, including one generated in the same pass', () => {
    assert.deepEqual(kinds(planOccurrences({ upcoming: [occ(17)], now: NOW, catchUp: 'latest', overlap: 'skip', previousOpen: true })), ['17:skip(previous_open)']);
    assert.deepEqual(kinds(planOccurrences({ upcoming: [occ(7), occ(8)], now: NOW, catchUp: 'all', overlap: 'skip', previousOpen: false })), ['07:generate', '08:skip(previous_open)']);
  });

  it('accounts for every occurrence it is given, in order', () => {
    const upcoming = Array.from({ length: 20 }, (_, i) => occ(i + 1));
    for (const catchUp of ['latest', 'all', 'none'] as const) {
      for (const overlap of ['skip', 'create'] as const) {
        const decisions = planOccurrences({ upcoming, now: NOW, catchUp, overlap, previousOpen: false });
        assert.deepEqual(decisions.map((d) => d.occurrence), upcoming);
      }
    }
  });
});
