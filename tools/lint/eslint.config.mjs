// ESLint for @ems-partner/node-red. Each rule is here for a reader; docs/architecture.md says why.
// Runs from the repository root: `npm run lint` (scripts/lint.js).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// A `const` or `let` of one letter makes a reader look back for what it holds; loop indices and
// the parameters of one-line lambdas keep their short names.
const ONE_LETTER = [
  {
    selector:
      'VariableDeclaration:not(ForStatement > .init):not(ForOfStatement > .left):not(ForInStatement > .left) > VariableDeclarator > Identifier.id[name=/^[A-Za-z]$/]',
    message: 'Name what the variable holds: one-letter names are for loop indices and one-line lambdas.',
  },
];

export default tseslint.config(
  {
    basePath: root,
    ignores: [
      'node_modules/**',
      'tools/lint/node_modules/**',
      'dist/**',
      'resources/**',
      'coverage/**',
      'docs/api/**',
      '.test-tmp/**',
      '.demo-userdir/**',
      'bench/.tmp/**',
      'nodes/**',
      'examples/**',
    ],
  },
  {
    basePath: root,
    files: ['**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    languageOptions: {
      parserOptions: { project: ['./tsconfig.test.json', './tsconfig.editor.json'], tsconfigRootDir: root },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-require-imports': 'off',
      'no-restricted-syntax': ['error', ...ONE_LETTER],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-console': 'off',
    },
  },
  {
    basePath: root,
    files: ['**/*.js', '**/*.cjs'],
    extends: [js.configs.recommended],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        __dirname: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        URL: 'readonly',
        exports: 'writable',
        __filename: 'readonly',
        globalThis: 'readonly',
        performance: 'readonly',
        AbortController: 'readonly',
        queueMicrotask: 'readonly',
        fetch: 'readonly',
      },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      'no-restricted-syntax': ['error', ...ONE_LETTER],
    },
  },
  { basePath: root, files: ['**/*.mjs'], extends: [js.configs.recommended], languageOptions: { sourceType: 'module' } },
  // Sizes a reader can hold: no file over 400 lines; in the node adapters no function over 60.
  { files: ['**/*.ts', '**/*.js', '**/*.mjs'], rules: { 'max-lines': ['error', { max: 400 }] } },
  { files: ['src/nodes/**/*.ts'], rules: { 'max-lines-per-function': ['error', { max: 60 }] } },
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
);
