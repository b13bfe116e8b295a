/**
 * dnstap sensor benchmark (`npm run bench:sensor`), in one run:
 * 1. decode alone: Frame Streams + dnstap protobuf + DNS message + pairing, frames per second and
 *    CPU per frame on this core;
 * 2. decode + log line;
 * 3. decode + log line + produce, end to end: a child process writes the stream to the sensor's Unix
 *    socket as fast as it reads, the sensor (DnstapSource, SensorRunner, the idempotent producer)
 *    forwards to a real 1-node Kafka; timed until Kafka acknowledged every line;
 * 4. what `dnsperf` pushes through Debian's Unbound on this machine, with dnstap to the sensor, and
 *    whether the sensor kept up (lines == answers).
 *
 *   node --import tsx bench/sensor.ts [--transactions N] [--dnsperf-seconds S] [--port P] [--keep-broker] [--no-kafka]
 *
 * Figures only: nothing here asserts a rate.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DnstapSource } from '../src/app/sensors/dnstap-source.ts';
import { SensorRunner } from '../src/app/sensors/sensor-runner.ts';
import { runDnsperf } from '../src/dev/dns-load.ts';
import { startUnbound } from '../src/dev/unbound.ts';
import { createProducer } from '../src/kafka/producer.ts';
import { silentLogger } from '../src/observability/logger.ts';
import { DEFAULT_LOG_LINE_MAPPING } from '../src/sources/log-line.ts';
import { createTopics } from '../test/support/pipeline-harness.ts';
import { obtainBroker } from './bench-broker.ts';
import { decodePass, dnstapWorkload, type PassFigures } from './sensor-workload.ts';

const log = (m: string) => process.stderr.write(`${m}\n`);
const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;

const rate = (p: PassFigures) => Math.round(p.frames / p.seconds);
const perFrame = (p: PassFigures) => ((p.cpuMs * 1000) / p.frames).toFixed(2);
/** Frames per second of CPU time: the single-core rate, whatever else the machine runs meanwhile. */
const perCpuSecond = (p: PassFigures) => Math.round(p.frames / (p.cpuMs / 1000));

async function endToEnd(bootstrap: string, dir: string, transactions: number): Promise<PassFigures> {
  const topic = `bench-sensor-${process.pid}-${Date.now()}`;
  await createTopics(bootstrap, [topic], 3);
  const path = join(dir, 'e2e.sock');
  const source = new DnstapSource({ listen: { unix: path } });
  const producer = createProducer(
    {
      bootstrapServers: bootstrap,
      clientId: 'bench-sensor',
      transactionTimeoutMs: 60_000,
      messageTimeoutMs: 120_000,
      apiTimeoutMs: 30_000,
      overrides: { 'queue.buffering.max.messages': 200_000 },
    },
    silentLogger(),
  );
  const runner = new SensorRunner({
    name: 'bench',
    source,
    mapping: DEFAULT_LOG_LINE_MAPPING,
    topic,
    producer,
    buffer: { capacity: 50_000, maxPauseMs: 60_000 },
    log: silentLogger(),
    logIntervalMs: 0,
  });
  await runner.start();
  const child = fork(fileURLToPath(import.meta.url), ['--sender', path, String(transactions)], {
    execArgv: ['--import', 'tsx'],
  });
  await new Promise<void>((resolve) => child.once('message', () => resolve()));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  child.send('go');
  while (runner.counters().forwarded < transactions) {
    await new Promise((r) => setTimeout(r, 20));
    if (performance.now() - t0 > 300_000) break;
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuMs(process.cpuUsage(cpu0));
  const c = await runner.stop();
  if (c.dropped + c.failed + c.malformed > 0) log(`  end to end: ${JSON.stringify(c)}`);
  return { frames: c.received, seconds, cpuMs: cpu, lines: c.forwarded };
}

async function throughUnbound(bootstrap: string | undefined, dir: string, seconds: number) {
  const path = join(dir, 'unbound.sock');
  const source = new DnstapSource({ listen: { unix: path } });
  let forwardedLines = () => source.counters.forwarded;
  let runner: SensorRunner | undefined;
  if (bootstrap !== undefined) {
    const topic = `bench-sensor-unbound-${process.pid}-${Date.now()}`;
    await createTopics(bootstrap, [topic], 3);
    const producer = createProducer(
      {
        bootstrapServers: bootstrap,
        clientId: 'bench-sensor-unbound',
        transactionTimeoutMs: 60_000,
        messageTimeoutMs: 120_000,
        apiTimeoutMs: 30_000,
      },
      silentLogger(),
    );
    runner = new SensorRunner({
      name: 'unbound',
      source,
      mapping: DEFAULT_LOG_LINE_MAPPING,
      topic,
      producer,
      buffer: { capacity: 50_000, maxPauseMs: 60_000 },
      log: silentLogger(),
      logIntervalMs: 0,
    });
    await runner.start();
    const r = runner;
    forwardedLines = () => r.counters().forwarded;
  } else
    await source.start(
      () => true,
      () => undefined,
    );
  const { freePort } = await import('../test/helpers/free-port.ts');
  const port = await freePort();
  const unbound = await startUnbound({
    dir,
    port,
    dnstap: { unix: path },
    localZones: ['"example.org." static'],
    localData: ['www.example.org. 300 IN A 192.0.2.1', 'v6.example.org. 300 IN AAAA 2001:db8::1'],
  });
  const cpu0 = process.cpuUsage();
  const perf = await runDnsperf({
    dir,
    port,
    queries: [
      { name: 'www.example.org', type: 'A' },
      { name: 'v6.example.org', type: 'AAAA' },
      { name: 'nx1.example.org', type: 'A' },
    ],
    seconds,
    clients: 8,
  });
  const sensorCpu = cpuMs(process.cpuUsage(cpu0));
  let last = -1;
  for (;;) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = forwardedLines();
    if (now === last) break;
    last = now;
  }
  await unbound.stop();
  const lines = forwardedLines();
  if (runner !== undefined) await runner.stop();
  else await source.stop();
  return { perf, lines, sensorCpu };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      transactions: { type: 'string', default: '100000' },
      'dnsperf-seconds': { type: 'string', default: '10' },
      port: { type: 'string', default: '25492' },
      'keep-broker': { type: 'boolean', default: false },
      'no-kafka': { type: 'boolean', default: false },
    },
  });
  const transactions = Number(values.transactions);
  log(`building ${transactions} query/response pairs (${2 * transactions} dnstap frames)`);
  const { stream } = dnstapWorkload(transactions);
  decodePass(stream.subarray(0, Math.min(stream.length, 2_000_000)), true); // warm-up
  const decode = decodePass(stream, false);
  const withLines = decodePass(stream, true);
  const print = (label: string, p: PassFigures) =>
    console.log(
      `${label.padEnd(40)} ${String(rate(p)).padStart(9)} frames/s wall ${String(perCpuSecond(p)).padStart(9)} frames/CPU-s  ${perFrame(p).padStart(6)} µs CPU/frame  (${p.frames} frames, ${p.lines} lines, ${p.seconds.toFixed(2)} s)`,
    );
  print('decode (frames+protobuf+DNS+pairing)', decode);
  print('decode + log line', withLines);
  const dir = mkdtempSync(join(tmpdir(), 'hamstring-bench-sensor-'));
  const broker = values['no-kafka']
    ? undefined
    : await obtainBroker(Number(values.port), values['keep-broker'], log);
  try {
    if (broker !== undefined)
      print('decode + log line + produce (Kafka acks)', await endToEnd(broker.bootstrap, dir, transactions));
    const u = await throughUnbound(broker?.bootstrap, dir, Number(values['dnsperf-seconds']));
    console.log(
      `dnsperf through Unbound (dnstap on)       ${String(Math.round(u.perf.qps)).padStart(9)} queries/s  (${u.perf.completed} answered, ${u.perf.lost} lost; ` +
        `sensor ${u.lines} lines${broker ? ' in Kafka' : ''}, ${((u.sensorCpu * 1000) / Math.max(1, u.lines * 2)).toFixed(2)} µs CPU/frame)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await broker?.release();
  }
}

/** Child: writes the stream to the socket (the resolver's side), then exits. */
if (process.argv.includes('--sender')) {
  const [path, transactions] = process.argv.slice(process.argv.indexOf('--sender') + 1);
  const { stream } = dnstapWorkload(Number(transactions));
  process.send?.('ready');
  process.once('message', () => {
    const socket = connect(path!, () => socket.end(stream));
    socket.on('close', () => process.exit(0));
  });
} else await main();
