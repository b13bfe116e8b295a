import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { containerfile, readRepoFile, REPO } from './helpers.ts';

const { all, final } = containerfile();
const runs = all.filter(([k]) => k === 'RUN').map(([, rest]) => rest);
const setup = readRepoFile('scripts/setup.sh');

describe('deploy/Containerfile', () => {
  it('installs the Kafka client as scripts/setup.sh does: patched, then built from source', () => {
    const install = runs.find((r) => r.includes('npm ci'));
    assert.ok(install, 'a RUN installs the node modules');
    assert.ok(all.some(([k, rest]) => k === 'ENV' && rest === 'CKJS_LINKING=dynamic'));
    assert.match(setup, /CKJS_LINKING=dynamic npm ci --ignore-scripts/);
    assert.match(install, /npm ci --omit=dev --ignore-scripts /);
    // The same patch loop and rebuild as setup.sh, in the same order.
    const patch = 'patch --forward -p1 -d node_modules/@confluentinc/kafka-javascript';
    const rebuild = 'npm rebuild --build-from-source=@confluentinc/kafka-javascript';
    assert.ok(setup.includes('patches/kafka-javascript/*.patch') && setup.includes(rebuild));
    assert.ok(install.includes('for p in patches/kafka-javascript/*.patch'));
    assert.ok(install.indexOf('npm ci') < install.indexOf(patch), 'patched after the install');
    assert.ok(install.indexOf(patch) < install.indexOf(rebuild), 'built after the patches');
  });

  it('copies only files that exist and that .dockerignore lets into the context', () => {
    const admitted = readRepoFile('.dockerignore')
      .split('\n')
      .filter((l) => l.startsWith('!'))
      .map((l) => l.slice(1));
    const copies = all.filter(([k, rest]) => k === 'COPY' && !rest.startsWith('--from'));
    assert.ok(copies.length > 0);
    for (const [, rest] of copies) {
      const sources = rest.split(/\s+/).slice(0, -1);
      for (const source of sources) {
        assert.ok(existsSync(`${REPO}${source}`), `${source} exists`);
        assert.ok(admitted.includes(source), `.dockerignore admits ${source}`);
      }
    }
  });

  it('the image runs unprivileged, with the libraries librdkafka and the launcher load', () => {
    const user = final.find(([k]) => k === 'USER')?.[1];
    assert.ok(user && !/^(0|root)\b/.test(user), `USER ${user}`);
    const packages = final.find(([k, rest]) => k === 'RUN' && rest.includes('apt-get install'))?.[1] ?? '';
    // Runtime packages of the -dev libraries setup.sh builds librdkafka against, and bin/allocator.js's jemalloc.
    for (const lib of ['zlib1g', 'libssl3', 'libsasl2-2', 'libzstd1', 'liblz4-1', 'libcurl4', 'libjemalloc2'])
      assert.ok(packages.split(/\s+/).includes(lib), `the final stage installs ${lib}`);
    for (const dev of [
      'zlib1g-dev',
      'libssl-dev',
      'libsasl2-dev',
      'libzstd-dev',
      'liblz4-dev',
      'libcurl4-openssl-dev',
    ])
      assert.ok(setup.includes(dev), `setup.sh still builds against ${dev}`);
  });
});
