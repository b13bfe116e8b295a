import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../../../src/cli/dispatch.ts';
import { commands } from '../../../src/cli/registry.ts';
import { startPrivateKafka } from '../../helpers/private-kafka.ts';

let kafka: Awaited<ReturnType<typeof startPrivateKafka>>;
// A 1-node cluster of its own: killing the run-wide one would stall every file running beside it.
before(async () => {
  kafka = await startPrivateKafka('restart-single');
});
after(async () => {
  await kafka?.stop();
});

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (s: string) => out.push(s), err: (s: string) => err.push(s) }, out, err };
}

describe('dev kafka kill / start-node on a 1-node cluster (the command reference lists them as a pair)', () => {
  test('start-node --node 1 starts the only node again after kill --node 1', async () => {
    const dataDir = kafka.cluster.dataDir;
    const kill = capture();
    assert.equal(
      await runCli(['dev', 'kafka', 'kill', '--node', '1', '--data-dir', dataDir], kill.io, commands),
      0,
    );
    assert.equal(kafka.cluster.isNodeRunning(1), false);
    const start = capture();
    const code = await runCli(
      ['dev', 'kafka', 'start-node', '--node', '1', '--data-dir', dataDir],
      start.io,
      commands,
    );
    assert.equal(code, 0, start.err.join(''));
    assert.match(start.out.join(''), /kafka node 1 started and back in sync/);
    assert.equal(kafka.cluster.isNodeRunning(1), true);
    await kafka.cluster.waitReady(60_000);
  });
});
