// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const kafkaClientOnlyInKafka = {
  name: '@confluentinc/kafka-javascript',
  message: 'Only src/kafka/ may import the Kafka client (see README.md, Layout).',
};

/**
 * Layers import only downward: cli -> app (and verify) -> traffic -> stages -> monitoring -> runtime ->
 * kafka -> config -> sources -> errors. observability is usable by every layer and imports only config and errors;
 * assets (where the project's files are, from the sources or the bundle) is usable by every layer and imports nothing;
 * dev (local clusters) is for cli, app, verify, tests, benchmarks and scripts; errors (the common error
 * base) imports nothing. Each entry: the directory and what it may not import; cli, the top, has no
 * row because nothing is above it (the Kafka client stays banned there by the rule for all files).
 */
const all = [
  'errors',
  'sources',
  'config',
  'observability',
  'kafka',
  'runtime',
  'monitoring',
  'stages',
  'traffic',
];
const top = ['app', 'verify', 'cli', 'dev'];
const layers = [
  ['assets', [...all, ...top]],
  ['errors', [...all.filter((l) => l !== 'errors'), ...top]],
  // DNS sources (dnstap, Zeek, Suricata, packets) decoded into observations and log lines: pure
  // decoding below config, so config's schemas can name their fields; sockets and Kafka live above.
  ['sources', all.filter((l) => l !== 'errors' && l !== 'sources').concat(top)],
  ['config', ['kafka', 'runtime', 'monitoring', 'stages', 'traffic', ...top, 'observability']],
  ['observability', ['kafka', 'runtime', 'monitoring', 'stages', 'traffic', ...top]],
  ['kafka', ['runtime', 'monitoring', 'stages', 'traffic', ...top]],
  ['runtime', ['monitoring', 'stages', 'traffic', ...top]],
  ['monitoring', ['stages', 'traffic', ...top]],
  ['stages', ['traffic', ...top]],
  // The traffic generator (demo, tests, benchmarks) uses the detectors' features and a store type.
  ['traffic', top],
  ['app', ['verify', 'cli']],
  ['verify', ['app', 'cli']],
  ['dev', ['runtime', 'monitoring', 'stages', 'traffic', 'app', 'verify', 'cli']],
];

/** Stages and the traffic generator see the runtime only through its public surface, and never Kafka. */
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
              ...(layer === 'stages' || layer === 'traffic' ? stageExtra : []),
            ],
            message: `src/${layer} may import only lower layers (cli -> app -> traffic -> stages -> monitoring -> runtime -> kafka -> config -> sources -> errors).`,
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
