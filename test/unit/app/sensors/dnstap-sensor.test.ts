import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { DnstapSource } from '../../../../src/app/sensors/dnstap-source.ts';
import { SensorRunner } from '../../../../src/app/sensors/sensor-runner.ts';
import { sensorRegistry } from '../../../../src/app/sensors/sensor-metrics.ts';
import type { ProducerPort, TransactionTally } from '../../../../src/kafka/producer.ts';
import type { OutgoingRecord } from '../../../../src/kafka/records.ts';
import { silentLogger } from '../../../../src/observability/logger.ts';
import {
  CONTROL,
  DNSTAP_CONTENT_TYPE,
  encodeControl,
  encodeData,
  FrameDecoder,
} from '../../../../src/sources/dnstap/frame-streams.ts';
import { DEFAULT_LOG_LINE_MAPPING } from '../../../../src/sources/log-line.ts';
import { clientPair } from '../../../support/dnstap-frames.ts';

const dir = mkdtempSync(join(tmpdir(), 'dnstap-sensor-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A producer that records what it is given; `hold` makes produce() wait until `release`. */
class FakeProducer implements ProducerPort {
  readonly records: OutgoingRecord[] = [];
  readonly transactionalId = undefined;
  #held: (() => void)[] = [];
  hold = false;
  connect = () => Promise.resolve();
  initTransactions = () => Promise.resolve();
  beginTransaction = () => Promise.resolve();
  sendOffsets = () => Promise.resolve();
  commitTransaction = () => Promise.resolve();
  abortTransaction = () => Promise.resolve();
  flush = () => Promise.resolve();
  close = () => Promise.resolve();
  deliveredOffsets = () => new Map<string, number>();
  produce(record: OutgoingRecord): Promise<void> {
    if (!this.hold) {
      this.records.push(record);
      return Promise.resolve();
    }
    return new Promise((resolve) =>
      this.#held.push(() => {
        this.records.push(record);
        resolve();
      }),
    );
  }
  release(): void {
    this.hold = false;
    for (const r of this.#held.splice(0)) r();
  }
  tally(): TransactionTally {
    const n = this.records.length;
    return { produced: n, delivered: n, purged: 0, failed: 0, refused: [] };
  }
}

async function sender(path: string): Promise<{ socket: Socket; replies: () => number[] }> {
  const socket = connect(path);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const decoder = new FrameDecoder();
  const seen: number[] = [];
  socket.on('data', (b: Buffer) => {
    for (const e of decoder.push(b)) if (e.kind === 'control') seen.push(e.type);
  });
  return { socket, replies: () => seen };
}

const until = async (check: () => boolean, what: string, ms = 5000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

test('frames over a Unix socket become keyed log lines; the handshake is answered', async () => {
  const path = join(dir, 'a.sock');
  const producer = new FakeProducer();
  const source = new DnstapSource({ listen: { unix: path } });
  const runner = new SensorRunner({
    name: 'test',
    source,
    mapping: DEFAULT_LOG_LINE_MAPPING,
    topic: 'hamstring_input-dns',
    producer,
    buffer: { capacity: 100, maxPauseMs: 1000 },
    log: silentLogger(),
    logIntervalMs: 0,
  });
  await runner.start();
  const s = await sender(path);
  s.socket.write(encodeControl(CONTROL.READY, [DNSTAP_CONTENT_TYPE]));
  await until(() => s.replies().includes(CONTROL.ACCEPT), 'ACCEPT');
  s.socket.write(encodeControl(CONTROL.START, [DNSTAP_CONTENT_TYPE]));
  for (let i = 0; i < 10; i += 1) {
    const pair = clientPair(`127.0.0.${10 + i}`, 1000 + i, i, `host${i}.test`, {
      answers: [{ type: 'A', name: `host${i}.test`, data: `192.0.2.${i}` }],
    });
    s.socket.write(
      Buffer.concat([encodeData(Buffer.from(pair.query)), encodeData(Buffer.from(pair.response))]),
    );
  }
  s.socket.write(encodeData(Buffer.from('garbage')));
  s.socket.write(encodeControl(CONTROL.STOP));
  await until(() => s.replies().includes(CONTROL.FINISH), 'FINISH');
  await until(() => producer.records.length === 10, '10 lines');
  const counters = await runner.stop();
  assert.deepEqual(
    producer.records.map((r) => [
      r.topic,
      r.key,
      (JSON.parse(String(r.value)) as { domain_name: string }).domain_name,
    ]),
    Array.from({ length: 10 }, (_, i) => ['hamstring_input-dns', `127.0.0.${10 + i}`, `host${i}.test`]),
  );
  assert.deepEqual(counters, {
    received: 21,
    malformed: 1,
    ignored: 10,
    forwarded: 10,
    dropped: 0,
    failed: 0,
    pending: 0,
  });
  const text = await sensorRegistry(() => [
    { name: 'test', kind: 'dnstap', counters: () => counters, extra: () => ({ ...source.decoderCounters }) },
  ]).metrics();
  assert.match(text, /hamstring_sensor_forwarded_total\{sensor="test",kind="dnstap"\} 10/);
  assert.match(text, /hamstring_sensor_detail\{sensor="test",kind="dnstap",counter="paired"\} 10/);
});

test('Kafka stalled: reading stops (back-pressure), then after max pause lines are dropped and counted', async () => {
  const path = join(dir, 'b.sock');
  const producer = new FakeProducer();
  producer.hold = true;
  const source = new DnstapSource({ listen: { unix: path } });
  const runner = new SensorRunner({
    name: 'slow',
    source,
    mapping: DEFAULT_LOG_LINE_MAPPING,
    topic: 't',
    producer,
    // Long enough that the 200 ms look below falls inside the pause even when a loaded host notices
    // the full buffer late (at 600 ms the pause once ended during it, and reading went on).
    buffer: { capacity: 20, maxPauseMs: 2_000, overflow: 5 },
    log: silentLogger(),
    logIntervalMs: 0,
  });
  await runner.start();
  const s = await sender(path);
  s.socket.write(encodeControl(CONTROL.START, [DNSTAP_CONTENT_TYPE]));
  // One write per frame so pausing the socket can take effect between frames.
  const total = 20_000;
  let written = 0;
  const writeAll = async () => {
    for (let i = 0; i < total; i += 1) {
      const pair = clientPair('127.0.0.9', 1, i, `n${i}.test`);
      if (!s.socket.write(encodeData(Buffer.from(pair.response))))
        await new Promise((r) => s.socket.once('drain', r));
      written += 1;
    }
  };
  const writing = writeAll();
  await until(() => runner.counters().pending >= 20, 'the buffer to fill');
  const pausedAt = source.counters.received;
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(source.counters.received, pausedAt, 'nothing read while paused (the sender is held back)');
  assert.ok(pausedAt < total);
  await writing;
  await until(() => runner.counters().dropped > 0, 'drops after max pause');
  await until(() => source.counters.received === total, 'every frame read');
  producer.release();
  await until(() => runner.counters().pending === 0, 'the buffer to drain');
  const c = await runner.stop();
  assert.equal(written, total);
  assert.equal(c.received, total);
  assert.equal(c.forwarded + c.dropped, total, 'every frame forwarded or counted as dropped');
  assert.ok(c.forwarded >= 20, `the buffered lines were kept (${c.forwarded})`);
  s.socket.destroy();
});
