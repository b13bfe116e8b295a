import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dltReplayCommand } from '../../../src/cli/commands/dlt-replay.ts';
import { runCli } from '../../../src/cli/dispatch.ts';
import { commands } from '../../../src/cli/registry.ts';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { createProducer } from '../../../src/kafka/producer.ts';
import type { FetchedRecord } from '../../../src/kafka/records.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { deadLetterOf } from '../../../src/runtime/record-errors/dead-letter.ts';
import {
  REPLAYED_FROM_HEADER,
  replayDeadLetters,
  replayGroupId,
  unreplayableTopic,
} from '../../../src/app/dlt-replay.ts';
import type { StageOutput } from '../../../src/runtime/stage.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { uniqueTopic, uniqueTransactionalId } from '../../helpers/names.ts';
import { createTopics, readCommitted, testKafkaOptions } from '../../support/pipeline-harness.ts';

let bootstrap: string;
before(async () => {
  // The CLI logs the worker's progress to stderr; keep the test output readable.
  process.env.HAMSTRING_LOG_LEVEL ??= 'warn';
  bootstrap = (await testKafka()).bootstrap;
});

/** Dead letters of `count` records of `origin`, as the worker writes them (one transaction). */
function deadLetters(origin: string, dlt: string, from: number, count: number): StageOutput[] {
  return Array.from({ length: count }, (_, i) =>
    deadLetterOf(
      {
        topic: origin,
        partition: i % 3,
        offset: from + i,
        key: Buffer.from(`k-${from + i}`),
        value: Buffer.from(`v-${from + i}`),
        headers: { trace: Buffer.from(`t-${from + i}`) },
        timestamp: Date.now(),
      },
      dlt,
      {
        group: 'g',
        stage: 'test.stage',
        errorKind: 'record',
        error: new Error('boom'),
        attempts: 3,
        firstFailure: Date.now(),
        lastFailure: Date.now(),
      },
    ),
  );
}

/** Writes records transactionally, like the worker does: the DLT then holds commit markers too. */
async function writeTransactionally(records: StageOutput[]): Promise<void> {
  const p = createProducer(
    {
      bootstrapServers: bootstrap,
      clientId: 'dlt-writer',
      transactionalId: uniqueTransactionalId('dlt-writer'),
      transactionTimeoutMs: 30_000,
      messageTimeoutMs: 20_000,
      apiTimeoutMs: 20_000,
    },
    silentLogger(),
  );
  await p.connect(20_000);
  try {
    await p.initTransactions();
    await p.beginTransaction();
    for (const r of records) await p.produce(r);
    await p.commitTransaction();
  } finally {
    await p.close(5_000);
  }
}

async function setup(count: number): Promise<{ origin: string; dlt: string }> {
  const origin = uniqueTopic('origin');
  const dlt = `${origin}.DLT`;
  await createTopics(bootstrap, [origin], 3);
  await createTopics(bootstrap, [dlt], 2);
  await writeTransactionally(deadLetters(origin, dlt, 0, count));
  return { origin, dlt };
}

function header(r: FetchedRecord, name: string): string | undefined {
  return r.headers[name]?.toString();
}

/** Every value v-0..v-(n-1) exactly once, headers cleaned, replayed-from set. */
function assertReplayedOnce(records: FetchedRecord[], dlt: string, n: number): void {
  const values = records.map((r) => r.value?.toString() ?? '').sort();
  const expected = Array.from({ length: n }, (_, i) => `v-${i}`).sort();
  assert.deepEqual(values, expected, 'each dead letter replayed exactly once');
  for (const r of records) {
    const i = Number(r.value?.toString().slice(2));
    assert.equal(r.key?.toString(), `k-${i}`);
    assert.equal(header(r, 'trace'), `t-${i}`, 'original headers kept');
    assert.deepEqual(
      Object.keys(r.headers).filter((h) => h.startsWith('hamstring.dlt.')),
      [],
      'no hamstring.dlt.* header',
    );
    assert.match(
      header(r, REPLAYED_FROM_HEADER) ?? '',
      new RegExp(`^${dlt.replace(/\./g, '\\.')}@[01]:\\d+$`),
    );
  }
}

async function committedOffsets(group: string, topic: string): Promise<number[]> {
  const admin = createAdmin(bootstrap);
  try {
    return (await admin.groupOffsets(group, [topic])).map((o) => o.offset);
  } finally {
    admin.close();
  }
}

describe('hamstring dlt replay on a real broker', () => {
  test('replays every dead letter to its origin exactly once, and a second run replays nothing', async () => {
    const { origin, dlt } = await setup(12);
    const first = await replayDeadLetters({
      dltTopic: dlt,
      kafka: testKafkaOptions(bootstrap),
      log: silentLogger(),
    });
    assert.deepEqual(first.replayed, { [origin]: 12 });
    assert.deepEqual(first.unreplayable, []);
    assertReplayedOnce(await readCommitted(bootstrap, origin, 12, 30_000), dlt, 12);

    const second = await replayDeadLetters({
      dltTopic: dlt,
      kafka: testKafkaOptions(bootstrap),
      log: silentLogger(),
    });
    assert.deepEqual(second.replayed, {});
    assertReplayedOnce(await readCommitted(bootstrap, origin, 12, 30_000), dlt, 12);

    // Dead letters that arrive later are replayed by the next run, and only they.
    await writeTransactionally(deadLetters(origin, dlt, 12, 3));
    const third = await replayDeadLetters({
      dltTopic: dlt,
      kafka: testKafkaOptions(bootstrap),
      log: silentLogger(),
    });
    assert.deepEqual(third.replayed, { [origin]: 3 });
    assertReplayedOnce(await readCommitted(bootstrap, origin, 15, 30_000), dlt, 15);
  });

  test('a dry run lists what would be replayed and commits nothing', async () => {
    const { origin, dlt } = await setup(4);
    const lines: string[] = [];
    const code = await runCli(
      ['dlt', 'replay', dlt, '--bootstrap', bootstrap, '--dry-run'],
      { out: (l) => lines.push(l), err: (l) => lines.push(l) },
      commands,
    );
    assert.equal(code, 0, lines.join('\n'));
    assert.equal(lines.filter((l) => l.includes(`-> ${origin}`)).length, 4, lines.join('\n'));
    assert.ok(
      lines.some((l) => l.includes('would replay 4 record(s)')),
      lines.join('\n'),
    );
    assert.deepEqual(
      (await committedOffsets(replayGroupId(dlt), dlt)).filter((o) => o >= 0),
      [],
      'no offsets committed',
    );
    assert.equal((await readCommitted(bootstrap, origin, 0, 3_000)).length, 0);
  });

  test('the CLI replays to --to and prints a summary per target topic', async () => {
    const { dlt } = await setup(5);
    const target = uniqueTopic('fixed');
    await createTopics(bootstrap, [target], 1);
    const lines: string[] = [];
    const code = await runCli(
      ['dlt', 'replay', dlt, '--bootstrap', bootstrap, '--to', target],
      { out: (l) => lines.push(l), err: () => undefined },
      commands,
    );
    assert.equal(code, 0, lines.join('\n'));
    assert.deepEqual(lines, [`dlt replay ${dlt}: replayed 5 record(s)`, `  ${target}: 5`]);
    assertReplayedOnce(await readCommitted(bootstrap, target, 5, 30_000), dlt, 5);
    assert.ok(dltReplayCommand.help?.includes('.unreplayable'));
  });

  test('a record without an origin header is moved to <dlt>.unreplayable, reported, and the rest replayed', async () => {
    const { origin, dlt } = await setup(3);
    await writeTransactionally([{ topic: dlt, key: 'orphan', value: 'no-origin', partition: 0 }]);
    const summary = await replayDeadLetters({
      dltTopic: dlt,
      kafka: testKafkaOptions(bootstrap),
      log: silentLogger(),
    });
    assert.deepEqual(summary.replayed, { [origin]: 3 });
    assert.equal(summary.unreplayable.length, 1);
    assert.equal(summary.unreplayable[0]?.partition, 0);
    assertReplayedOnce(await readCommitted(bootstrap, origin, 3, 30_000), dlt, 3);
    const aside = await readCommitted(bootstrap, unreplayableTopic(dlt), 1, 30_000);
    assert.deepEqual(
      aside.map((r) => r.value?.toString()),
      ['no-origin'],
    );
    const again = await replayDeadLetters({
      dltTopic: dlt,
      kafka: testKafkaOptions(bootstrap),
      log: silentLogger(),
    });
    assert.deepEqual(again.replayed, {});
    assert.deepEqual(again.unreplayable, []);
  });

  test('a replay killed with SIGKILL inside a transaction and run again still replays exactly once', async () => {
    const { origin, dlt } = await setup(20);
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(new URL('./replay-child.ts', import.meta.url)), bootstrap, dlt],
      { stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, HAMSTRING_LOG_LEVEL: 'warn' } },
    );
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('HOLDING\n')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`replay child exited early with ${code}`)));
    });
    child.kill('SIGKILL');
    // The first transaction (two records) committed; the second was open when the process died.
    const committedBefore = (await committedOffsets(replayGroupId(dlt), dlt)).filter((o) => o >= 0);
    assert.ok(committedBefore.length > 0, 'the first transaction committed');

    const rerun = await replayDeadLetters({
      dltTopic: dlt,
      kafka: testKafkaOptions(bootstrap),
      log: silentLogger(),
    });
    // Offsets of the one setup transaction are contiguous from 0: committed offset = records done.
    const doneBefore = committedBefore.reduce((a, b) => a + b, 0);
    assert.ok(doneBefore > 0 && doneBefore < 20);
    assert.equal(
      rerun.replayed[origin],
      20 - doneBefore,
      'the rerun replays what the killed run did not commit',
    );
    assertReplayedOnce(await readCommitted(bootstrap, origin, 20, 30_000), dlt, 20);
  });
});
