#!/usr/bin/env node
// `npx wo …` from the clone: runs the CLI from its TypeScript sources through tsx (a dependency, so
// installed by `npm ci` and present in the image), as `npm run wo` does, with no build step first.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
