import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TransactionalWorker } from '../../../src/runtime/index.ts';
import { DLT_HEADERS } from '../../../src/runtime/record-errors/dead-letter.ts';
import { RETRY_HEADERS } from '../../../src/runtime/record-errors/retry-topics.ts';
import type { Stage } from '../../../src/runtime/stage.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { uniqueGroup, uniqueTopic } from '../../helpers/names.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import {
  checkExactlyOnce,
  createTopics,
  readCommitted,
  seed,
  testKafkaOptions,
} from '../../support/pipeline-harness.ts';

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

const seq = (v: Buffer | null) => Number(v?.toString());

describe('non-blocking retry topics (real broker)', () => {
  test('a failing record moves through <topic>-retry-<n> with its delays while its partition flows on; exactly once', async () => {
    const input = uniqueTopic('rt-in');
    const output = uniqueTopic('rt-out');
    const group = uniqueGroup('rt');
    await createTopics(bootstrap, [input, output, `${input}.DLT`], 1);
    await seed(bootstrap, input, 0, 200);
    const seen = new Map<number, number[]>();
    const stage: Stage = {
      name: group,
      inputTopics: [input],
      outputTopics: [output],
      process(records) {
        const outputs = [];
        const failures = [];
        for (const r of records) {
          const n = seq(r.value);
          const times = [...(seen.get(n) ?? []), Date.now()];
          seen.set(n, times);
          // 10 succeeds on its second retry; 20 always fails and ends in the DLT.
          if ((n === 10 && times.length < 3) || n === 20)
            failures.push({ record: r, error: new Error(`fail ${n}`) });
          else outputs.push({ topic: output, key: r.key, value: r.value });
        }
        return { outputs, failures };
      },
    };
    const w = new TransactionalWorker({
      stage,
      instanceId: '0',
      mode: 'exactly-once',
      kafka: testKafkaOptions(bootstrap),
      batch: { size: 50, timeoutMs: 50 },
      log: silentLogger(),
      recordErrors: { retryTopics: { delaysMs: [500, 1_500] } },
    });
    await w.start();
    try {
      const out = await readCommitted(bootstrap, output, 199, 90_000);
      const report = checkExactlyOnce(out, 200);
      assert.equal(report.duplicates, 0);
      assert.equal(report.lost, 1, 'only 20 is missing');
      // Non-blocking: 10 comes after records that followed it in its partition (the documented trade-off).
      const order = out.map((r) => seq(r.value));
      assert.ok(order.indexOf(10) > order.indexOf(11));
      const t = seen.get(10)!;
      assert.equal(t.length, 3);
      assert.ok(
        t[1]! - t[0]! >= 450 && t[2]! - t[1]! >= 1_400,
        `delays honoured: ${t[1]! - t[0]!}, ${t[2]! - t[1]!}`,
      );
      const hop1 = await readCommitted(bootstrap, `${input}-retry-1`, 2, 10_000);
      assert.equal(hop1.length, 2);
      assert.equal(hop1[0]!.headers[RETRY_HEADERS.topic]?.toString(), input);
      const dlt = await readCommitted(bootstrap, `${input}.DLT`, 1, 10_000);
      assert.equal(dlt.length, 1);
      assert.equal(seq(dlt[0]!.value), 20);
      assert.equal(
        dlt[0]!.headers[DLT_HEADERS.topic]?.toString(),
        input,
        'dead letter names the origin topic',
      );
      assert.equal(dlt[0]!.headers[DLT_HEADERS.offset]?.toString(), '20');
      assert.equal(dlt[0]!.headers[DLT_HEADERS.attempts]?.toString(), '3');
      assert.ok(!Object.keys(dlt[0]!.headers).some((k) => k.startsWith('hamstring.retry.')));
    } finally {
      await w.stop();
    }
  });
});
