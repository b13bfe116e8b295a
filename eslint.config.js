// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.cache/', 'var/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', 'bin/*.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            {
              from: 'package',
              package: 'node:test',
              name: ['test', 'describe', 'it', 'suite', 'before', 'after'],
            },
          ],
        },
      ],
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@confluentinc/kafka-javascript',
              message: 'Only src/kafka/ may import the Kafka client (see docs/design: layers).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/kafka/**/*.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
  {
    // The dashboard's pages: plain ES modules run by the browser, no build step.
    files: ['src/app/dashboard/public/**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(
        [
          'document',
          'location',
          'history',
          'fetch',
          'Node',
          'ResizeObserver',
          'URLSearchParams',
          'setTimeout',
        ].map((name) => [name, 'readonly']),
      ),
    },
  },
);
