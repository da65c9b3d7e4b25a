import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { alignmentDistance, nearestName } from './nearest-name.js';

const LIST_RECORDS = ['limit', 'offset', 'status', 'categoryId', 'assetId', 'locationId', 'assignee', 'createdAfter', 'createdBefore', 'updatedAfter', 'overdue'];

describe('the nearest known name', () => {
  it('counts a swap of neighbours as one edit, like an insertion, a deletion or a substitution', () => {
    assert.equal(alignmentDistance('stauts', 'status'), 1);
    assert.equal(alignmentDistance('ofset', 'offset'), 1);
    assert.equal(alignmentDistance('limt', 'limit'), 1);
    assert.equal(alignmentDistance('statsu', 'status'), 1);
    assert.equal(alignmentDistance('kitten', 'sitting'), 3);
    assert.equal(alignmentDistance('', 'abc'), 3);
    assert.equal(alignmentDistance('same', 'same'), 0);
    // Optimal string alignment edits no letter twice: `ca` → `abc` is 3, not Damerau–Levenshtein's 2.
    assert.equal(alignmentDistance('ca', 'abc'), 3);
  });

  it('suggests what a misspelt, miscased or snake_cased name meant', () => {
    assert.equal(nearestName('stauts', LIST_RECORDS), 'status');
    assert.equal(nearestName('Status', LIST_RECORDS), 'status');
    assert.equal(nearestName('ofset', LIST_RECORDS), 'offset');
    assert.equal(nearestName('categoryid', LIST_RECORDS), 'categoryId');
    assert.equal(nearestName('category_id', LIST_RECORDS), 'categoryId');
    assert.equal(nearestName('updated_after', LIST_RECORDS), 'updatedAfter');
    assert.equal(nearestName('asignee', LIST_RECORDS), 'assignee');
  });

  it('suggests nothing for a name close to none, and never a whole other short name', () => {
    assert.equal(nearestName('foo', LIST_RECORDS), undefined);
    assert.equal(nearestName('priority', LIST_RECORDS), undefined);
    assert.equal(nearestName('x', ['q']), undefined);
    assert.equal(nearestName('qq', ['q']), undefined);
    assert.equal(nearestName('stauts', []), undefined);
  });

  it('takes the closest of several, and the first of equally close ones', () => {
    assert.equal(nearestName('nme', ['name', 'names']), 'name');
    assert.equal(nearestName('tag', ['tags', 'tab']), 'tags');
  });
});
