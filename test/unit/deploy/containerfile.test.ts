import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { posix } from 'node:path';
import { describe, it } from 'node:test';
import { containerfile, IMAGE_ROOT, imageEntrypoint, readRepoFile, REPO } from './helpers.ts';

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

  it('starts through bin/hamstring, the command npm installs, which execs node: one process', () => {
    const [command, ...rest] = imageEntrypoint();
    assert.equal(command, `${IMAGE_ROOT}bin/hamstring`);
    assert.deepEqual(rest, [], 'the container args follow the command');
    const bin = command.slice(IMAGE_ROOT.length);
    const pkg = JSON.parse(readRepoFile('package.json')) as { bin: Record<string, string> };
    assert.equal(pkg.bin.hamstring, bin);
    assert.ok(
      all.some(([k, rest]) => k === 'COPY' && rest === `${posix.dirname(bin)}/ ${posix.dirname(bin)}/`),
      `the image holds ${bin}`,
    );
    // COPY keeps the mode the build context gives the file.
    assert.notEqual(statSync(`${REPO}${bin}`).mode & 0o111, 0, `${bin} is executable`);
    const script = readRepoFile(bin);
    assert.ok(script.startsWith('#!/bin/sh\n'), `${bin} is a POSIX shell script`);
    // node replaces the script (no launcher left as the container's first process) wherever it starts.
    const starts = script.split('\n').filter((line) => /(^|[\s;)])node\s/.test(line.replace(/#.*/, '')));
    assert.ok(starts.length > 0, `${bin} starts node`);
    for (const line of starts) assert.match(line, /\bexec node\s/, line);
  });

  it('the image runs unprivileged, with the libraries librdkafka and bin/hamstring load', () => {
    const user = final.find(([k]) => k === 'USER')?.[1];
    assert.ok(user && !/^(0|root)\b/.test(user), `USER ${user}`);
    const packages = final.find(([k, rest]) => k === 'RUN' && rest.includes('apt-get install'))?.[1] ?? '';
    // Runtime packages of the -dev libraries setup.sh builds librdkafka against, and the jemalloc bin/hamstring preloads.
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
