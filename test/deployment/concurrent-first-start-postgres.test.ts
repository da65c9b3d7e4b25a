import { describe, it } from 'node:test';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { startFourAtOnce } from './first-start-round.js';

describe('four processes starting at once on an empty deployment (postgres)', { skip: !TEST_DIALECTS.includes('postgres') && 'needs WO_TEST_DATABASE_URL' }, () => {
  for (let round = 1; round <= 3; round++) {
    it(`create exactly one key of each kind and all run with them (round ${round} of 3)`, () => startFourAtOnce('postgres', round));
  }
});
