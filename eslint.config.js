import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/', 'sdk/dist/', 'sdk/src/generated/', 'data/', 'node_modules/', 'bench/results/', 'coverage/', 'src/admin/public/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { languageOptions: { globals: { ...globals.node } } },
  {
    // Tests read loosely-typed JSON bodies; `any` there is the honest type.
    files: ['test/**', '**/*.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read configuration through src/config.ts only.' }],
      // Features add to the shared catalogues by declaration merging: `interface EventCatalogue extends Record<…> {}`.
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
    },
  },
  {
    // Examples and the SDK's tests are programs of their own, not the service: they read their environment.
    files: ['src/config.ts', 'scripts/**', 'test/**', 'bench/**', 'examples/**', 'sdk/test/**', '**/*.test.ts', 'eslint.config.js'],
    rules: { 'no-restricted-properties': 'off' },
  },
);
