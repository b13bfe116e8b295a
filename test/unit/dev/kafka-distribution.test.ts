import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { kafkaLibsDir, kafkaVersion, parseEnvFile } from '../../../src/dev/kafka-distribution.ts';
import { projectRoot } from '../../../src/dev/paths.ts';

describe('kafka distribution', () => {
  test('parses KEY=value lines and ignores comments', () => {
    assert.deepEqual(parseEnvFile('# c\nKAFKA_VERSION=4.1.2\nQUOTED="x y"\n\n'), {
      KAFKA_VERSION: '4.1.2',
      QUOTED: 'x y',
    });
  });

  test('reads the version from dev/kafka.env, the file setup.sh sources', () => {
    const expected = /^KAFKA_VERSION=(.+)$/m.exec(
      readFileSync(join(projectRoot, 'dev', 'kafka.env'), 'utf8'),
    )![1];
    assert.equal(kafkaVersion(), expected);
  });

  test('caches jars where setup.sh puts them, honouring HAMSTRING_CACHE_DIR', () => {
    assert.equal(kafkaLibsDir('4.1.2', { HAMSTRING_CACHE_DIR: '/c' }), '/c/kafka-4.1.2/libs');
    assert.match(kafkaLibsDir('4.1.2', { HOME: '/h' }), /\.cache\/hamstring\/kafka-4\.1\.2\/libs$/);
  });
});
