import { describeKeyMismatches } from './key-mismatch-cases.js';

describeKeyMismatches('sqlite');
