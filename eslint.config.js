// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const kafkaClientOnlyInKafka = {
  name: '@confluentinc/kafka-javascript',
  message: 'Only src/kafka/ may import the Kafka client (see README.md, Layout).',
};

/**
 * Layers import only downward: cli -> app (and verify) -> stages -> monitoring -> runtime -> kafka ->
 * config. observability is usable by every layer and imports only config; dev (local clusters) is
 * for cli, app, verify, tests, benchmarks and scripts. Each entry: the directory and what it may not import.
 */
const layers = [
  ['config', ['kafka', 'runtime', 'monitoring', 'stages', 'app', 'verify', 'cli', 'dev', 'observability']],
  ['observability', ['kafka', 'runtime', 'monitoring', 'stages', 'app', 'verify', 'cli', 'dev']],
  ['kafka', ['runtime', 'monitoring', 'stages', 'app', 'verify', 'cli', 'dev']],
  ['runtime', ['monitoring', 'stages', 'app', 'verify', 'cli', 'dev']],
  ['monitoring', ['stages', 'app', 'verify', 'cli', 'dev']],
  ['stages', ['app', 'verify', 'cli', 'dev']],
  ['app', ['verify', 'cli']],
  ['verify', ['app', 'cli']],
  ['dev', ['runtime', 'monitoring', 'stages', 'app', 'verify', 'cli']],
];

/** Stages see the runtime only through its public surface, and never Kafka. */
const stageExtra = ['**/kafka/*', '**/kafka/**/*', '**/runtime/**/*', '!**/runtime/index.ts'];

const layerRules = layers.map(([layer, above]) => ({
  files: [`src/${layer}/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        paths: layer === 'kafka' ? [] : [kafkaClientOnlyInKafka],
        patterns: [
          {
            group: [
              ...above.flatMap((l) => [`**/${l}/*`, `**/${l}/**/*`]),
              ...(layer === 'stages' ? stageExtra : []),
            ],
            message: `src/${layer} may import only lower layers (cli -> app -> stages -> monitoring -> runtime -> kafka -> config).`,
          },
        ],
      },
    ],
  },
}));

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
      'no-restricted-imports': ['error', { paths: [kafkaClientOnlyInKafka] }],
    },
  },
  ...layerRules,
  {
    // Probes the cluster itself (background load, direct reads), below the runtime's ports on purpose.
    files: ['test/support/probe-load.ts'],
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
