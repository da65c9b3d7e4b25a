// Writes docs/errors.md from the error catalogue's documentation (src/http/error-docs.ts), the text the
// service also serves at /docs/errors. The docs test fails while the file differs from it.
import { writeFileSync } from 'node:fs';
import { errorsMarkdown } from '../src/http/errors-page.js';

writeFileSync('docs/errors.md', errorsMarkdown());
console.log('wrote docs/errors.md');
