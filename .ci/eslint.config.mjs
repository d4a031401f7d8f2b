// ESLint's config lives here because the package's top level is fixed (issue 2); `npm run lint`
// passes it with --config. Patterns are relative to the repository root (basePath).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { basePath: '..' },
  { ignores: ['dist/**', 'node_modules/**', 'test-results/**', 'examples/*/node_modules/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: [
      'src/**/*.ts',
      'test/**/*.ts',
      'test/**/*.mjs',
      'bin/**/*.js',
      'scripts/**/*.mjs',
      'examples/**/*.mjs',
      '.ci/**/*.mjs',
    ],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ['ui/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // Issue 32: functions short enough to read at once, files a newcomer can hold in their head. A commander
    // chain (a command's flags, one per line) may run longer: it says so where it does.
    files: ['src/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 60, IIFEs: true }],
      'max-lines': ['error', { max: 400 }],
    },
  },
  {
    rules: {
      // Test bodies and protocol messages are inspected freely; `any` is allowed where it is written on purpose.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
);
