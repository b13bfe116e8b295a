import { monitoringRowsOfJson } from '../../../src/monitoring/compact-rows.ts';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createAdmin } from '../../../src/kafka/admin.ts';
import type { FetchedRecord } from '../../../src/kafka/records.ts';
import { DEFAULT_LOG_LINE_MAPPING } from '../../../src/sources/log-line.ts';
import { pipelineTopic } from '../../../src/stages/index.ts';
import { linesOf } from '../../../src/stages/line-frames.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { exited } from '../../support/spawn-worker.ts';
import { pipelineTestConfig, readUntil, resetBroker } from './support.ts';

/**
 * A Zeek dns.log and a Suricata eve.json tailed by the logserver as a separate process, killed -9
 * while it reads and restarted, the file rotated (renamed to a time-stamped name, a new one
 * started) in between: every row reaches the collector topic once, every bad row is recorded once.
 */
const ROWS = 3000;
const BAD_EVERY = 250;

let bootstrap: string;
const children: ChildProcess[] = [];
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});
after(() => {
  for (const child of children) child.kill('SIGKILL');
});

function runLogserver(configPath: string): ChildProcess {
  const child = spawn(
    process.execPath,
    ['bin/hamstring.js', 'run', 'logserver', '--config', configPath, '--create-topics'],
    {
      env: { ...process.env, HAMSTRING_LOG_LEVEL: 'warn', HAMSTRING_INSTANCE_ID: `logserver-${process.pid}` },
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  children.push(child);
  return child;
}

const FIELDS =
  'ts uid id.orig_h id.orig_p id.resp_h id.resp_p proto trans_id rtt query qclass qclass_name qtype qtype_name rcode rcode_name AA TC RD RA Z answers TTLs rejected';
const TYPES =
  'time string addr port addr port enum count interval string count string count string count string bool bool bool bool count vector[string] vector[interval] bool';
const ZEEK_HEADER = [
  '#separator \\x09',
  '#set_separator\t,',
  '#empty_field\t(empty)',
  '#unset_field\t-',
  '#path\tdns',
  '#open\t2025-12-01-10-00-00',
  `#fields\t${FIELDS.replaceAll(' ', '\t')}`,
  `#types\t${TYPES.replaceAll(' ', '\t')}`,
].join('\n');

const host = (i: number) => `10.7.${i % 20}.${(i % 200) + 1}`;
const isBad = (i: number) => i % BAD_EVERY === BAD_EVERY - 1;

function zeekRow(i: number): string {
  const ts = isBad(i) ? 'not-a-time' : (1764583200 + i / 1000).toFixed(6);
  const nx = i % 5 === 0;
  const answers = nx ? '(empty)' : `192.0.2.${i % 250},198.51.100.${i % 250}`;
  return [
    ts,
    `C${i}`,
    host(i),
    40000 + (i % 20000),
    '10.0.0.53',
    53,
    'udp',
    i % 65536,
    '0.001',
    `z${i}.example.com`,
    1,
    'C_INTERNET',
    1,
    'A',
    nx ? 3 : 0,
    nx ? 'NXDOMAIN' : 'NOERROR',
    'F',
    'F',
    'T',
    'T',
    0,
    answers,
    nx ? '(empty)' : '60.0,60.0',
    'F',
  ].join('\t');
}

/** A query and its answer; v1 (two per-record answer events) for odd i, v2 for even i. */
function eveEvents(i: number): string[] {
  const ts = (us: number) =>
    new Date(Date.UTC(2025, 11, 1, 10) + i).toISOString().replace('Z', `${String(us).padStart(3, '0')}+0000`);
  const client = { src_ip: host(i), src_port: 40000 + (i % 20000), dest_ip: '10.0.0.53', dest_port: 53 };
  const server = { src_ip: '10.0.0.53', src_port: 53, dest_ip: host(i), dest_port: 40000 + (i % 20000) };
  const base = { flow_id: 900000 + i, event_type: 'dns', proto: 'UDP' };
  const name = `s${i}.example.com`;
  const query = {
    ...base,
    timestamp: isBad(i) ? 'yesterday' : ts(100),
    ...client,
    dns: { type: 'query', id: i % 65536, rrname: name, rrtype: 'A', tx_id: 0 },
  };
  const answer = (rdata: string) => ({
    ...base,
    timestamp: ts(900),
    ...server,
    dns: { type: 'answer', id: i % 65536, rcode: 'NOERROR', rrname: name, rrtype: 'A', ttl: 60, rdata },
  });
  const v2 = {
    ...base,
    timestamp: ts(900),
    ...server,
    dns: {
      version: 2,
      type: 'answer',
      id: i % 65536,
      rrname: name,
      rrtype: 'A',
      rcode: 'NOERROR',
      answers: [{ rrname: name, rrtype: 'A', ttl: 60, rdata: `192.0.2.${i % 250}` }],
    },
  };
  const events =
    i % 2 === 1 ? [query, answer(`192.0.2.${i % 250}`), answer(`198.51.100.${i % 250}`)] : [query, v2];
  return events.map((e) => JSON.stringify(e));
}

interface Scenario {
  readonly format: 'zeek-tsv' | 'suricata-eve';
  readonly header: string | undefined;
  readonly rows: (i: number) => string[];
  readonly name: (i: number) => string;
  /** A bad query event still leaves its answer, forwarded on its own. */
  readonly badRowsForwarded: boolean;
  readonly timeEnds?: (i: number) => string;
}

async function tailWithKillAndRotation(s: Scenario): Promise<void> {
  await resetBroker(bootstrap);
  let input = '';
  const { config, path, dir } = pipelineTestConfig({
    bootstrap,
    clickhousePort: 1,
    edit: (tree) => {
      input = join((tree.runtime as { state: { dir: string } }).state.dir, '..', 'dns.log');
      const storage = (tree.pipeline as Record<string, Record<string, unknown>>).log_storage!;
      storage.logserver = {
        input_file: input,
        input_format: s.format,
        // Neither Zeek nor Suricata logs message sizes; the shipped collector requires one.
        log_line: {
          ...DEFAULT_LOG_LINE_MAPPING,
          size: { from: 'response_size', suffix: 'b', missing: '0b' },
        },
      };
    },
  });
  const output = pipelineTopic(config, 'logserver_to_collector', 'dga_collector');
  const admin = createAdmin(bootstrap);
  const produced = async () =>
    (await admin.watermarks(output).catch(() => [])).reduce((n, w) => n + w.high, 0);
  // Row 1499 is split at the kill: its first event (a query) before, the rest (answers) after.
  const SPLIT = 1499;
  const write = (from: number, to: number) => {
    const lines: string[] = [];
    for (let i = from; i < to; i++) {
      const events = s.rows(i);
      if (i === SPLIT) lines.push(...events.slice(0, 1));
      else if (i === SPLIT + 1) lines.push(...s.rows(SPLIT).slice(1), ...events);
      else lines.push(...events);
    }
    appendFileSync(input, `${lines.join('\n')}\n`);
  };
  try {
    writeFileSync(input, s.header === undefined ? '' : `${s.header}\n`);
    write(0, 1000);
    let logserver = runLogserver(path);
    await waitFor(async () => (await produced()) > 0, {
      timeoutMs: 90_000,
      message: 'the logserver forwards rows',
    });
    write(1000, 1500);
    // Killed once the rows before the split row are committed, hence the position after it.
    await readUntil(
      bootstrap,
      output,
      (rs) => rs.some((r) => String(r.value).includes(`${s.name(SPLIT - 1)}"`)),
      60_000,
    );
    logserver.kill('SIGKILL');
    await exited(logserver);
    write(1500, 2000);
    // Rotation while it is down: the rest of the old file under a time-stamped name, a new file.
    renameSync(input, join(dir, 'dns.2025-12-01-10-00-00.log'));
    writeFileSync(input, s.header === undefined ? '' : `${s.header}\n`);
    write(2000, 2500);
    logserver = runLogserver(path);
    write(2500, ROWS);

    const good = Array.from({ length: ROWS }, (_, i) => i).filter((i) => s.badRowsForwarded || !isBad(i));
    const seen = new Map<string, number>();
    const count = (records: readonly FetchedRecord[]) => {
      seen.clear();
      // The logserver frames a call's lines of one subnet: each line of a frame is a row forwarded.
      for (const value of records.flatMap((r) => linesOf(r).lines)) {
        const line = JSON.parse(String(value)) as { domain_name: string; src_ip: string; ts: string };
        const i = Number(/^.(\d+)\./.exec(line.domain_name)?.[1]);
        assert.equal(line.src_ip, host(i), `${line.domain_name}: the asking host`);
        const end = s.timeEnds?.(i);
        if (end !== undefined) assert.ok(line.ts.endsWith(end), `${line.domain_name} at ${line.ts}`);
        seen.set(line.domain_name, (seen.get(line.domain_name) ?? 0) + 1);
      }
      return seen.size;
    };
    count(await readUntil(bootstrap, output, (rs) => count(rs) >= good.length, 180_000));
    const missing = good.map(s.name).filter((n) => !seen.has(n));
    const twice = [...seen].filter(([, n]) => n > 1).map(([n]) => n);
    assert.deepEqual(missing.slice(0, 10), [], `${missing.length} rows never forwarded`);
    assert.deepEqual(twice.slice(0, 10), [], `${twice.length} rows forwarded twice`);
    assert.equal(seen.size, good.length);

    const failedRows = (records: readonly FetchedRecord[]) =>
      records.flatMap((r) => {
        return (monitoringRowsOfJson(JSON.parse(String(r.value))) ?? []) as { message_text: string }[];
      });
    const bad = ROWS / BAD_EVERY;
    const failed = failedRows(
      await readUntil(bootstrap, 'clickhouse_failed_loglines', (rs) => failedRows(rs).length >= bad, 60_000),
    );
    assert.equal(failed.length, bad, 'each bad row recorded once');
    assert.equal(new Set(failed.map((f) => f.message_text)).size, bad);
    logserver.kill('SIGTERM');
    await exited(logserver);
  } finally {
    admin.close();
  }
}

test('Zeek TSV dns.log: kill -9, rotation and restart; every row forwarded once, every bad row recorded once', async () => {
  await tailWithKillAndRotation({
    format: 'zeek-tsv',
    header: ZEEK_HEADER,
    rows: (i) => [zeekRow(i)],
    name: (i) => `z${i}.example.com`,
    badRowsForwarded: false,
  });
});

test('Suricata EVE (v1 and v2): kill -9, rotation and restart; every transaction forwarded once, paired', async () => {
  await tailWithKillAndRotation({
    format: 'suricata-eve',
    header: undefined,
    rows: eveEvents,
    name: (i) => `s${i}.example.com`,
    badRowsForwarded: true,
    // Paired: the query's time (…100 µs); a bad query's answer alone has the answer's (…900 µs).
    // Row 1499's query was read before the kill, its answers after the restart: paired from the stored memory.
    timeEnds: (i) => (isBad(i) ? '900Z' : '100Z'),
  });
});
