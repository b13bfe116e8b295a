import assert from 'node:assert/strict';
import {
  appendFileSync,
  copyFileSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { HamstringConfig } from '../../../src/config/index.ts';
import type { StageOutput } from '../../../src/runtime/index.ts';
import { createLogserverStage } from '../../../src/stages/logserver/logserver-stage.ts';
import { MemoryState } from '../../support/memory-state.ts';
import { timerContext } from '../../support/stage-context.ts';
import { linesSent, monitoringRows } from './outputs.ts';
import { shippedConfig } from './fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'hamstring-logserver-decoded-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const fixture = (name: string) => new URL(`../../fixtures/sources/${name}`, import.meta.url);

function configFor(inputFile: string, format: 'zeek-tsv' | 'suricata-eve'): HamstringConfig {
  const config = shippedConfig();
  const logserver = { ...config.pipeline.log_storage.logserver, input_file: inputFile, input_format: format };
  return { ...config, pipeline: { ...config.pipeline, log_storage: { logserver } } };
}

const sent = (outputs: readonly StageOutput[]) =>
  linesSent(outputs)
    .filter((o) => o.topic === 'pipeline-logserver_to_collector-dga_collector')
    .map((o) => JSON.parse(o.line) as Record<string, string>);

test('zeek-tsv: rows become the collector lines of the default mapping; bad rows are recorded with reasons', async () => {
  const path = join(dir, 'zeek.log');
  copyFileSync(fixture('zeek-dns.log'), path);
  const stage = createLogserverStage({ config: configFor(path, 'zeek-tsv') });
  const state = new MemoryState(['file_position']);
  const { outputs } = await stage.onTimer!(timerContext(state, 0, 1_000));
  const lines = sent(outputs);
  assert.equal(lines.length, 6);
  assert.deepEqual(lines[0], {
    ts: '2025-12-01T10:00:00.123456Z',
    status_code: 'NOERROR',
    src_ip: '10.0.0.5',
    dns_server_ip: '10.0.0.53',
    domain_name: 'example.com',
    record_type: 'A',
    response_ip: '93.184.216.34',
  });
  assert.equal(lines[1]?.response_ip, '0.0.0.0', 'NXDOMAIN: the unspecified address, as HAMSTRING writes it');
  const failed = monitoringRows(outputs, 'failed_loglines');
  assert.deepEqual(
    failed.map((r) => r.reason_for_failure),
    [
      'zeek-tsv: 7 columns where #fields names 24',
      'zeek-tsv: field "ts": not a Zeek time',
      'zeek-tsv: field "query": unset',
    ],
  );
  assert.equal(monitoringRows(outputs, 'server_logs').length, 6);
});

test('zeek-tsv: a restart mid-file decodes with the stored header; a rotated file is finished, the new one has its own header', async () => {
  const path = join(dir, 'dns.log');
  const text = readFileSync(fixture('zeek-dns.log'), 'utf8').split('\n');
  const header = text.slice(0, 8).join('\n');
  writeFileSync(path, `${header}\n${text[8]}\n`);
  const config = configFor(path, 'zeek-tsv');
  const state = new MemoryState(['file_position']);
  const read = async () =>
    sent((await createLogserverStage({ config }).onTimer!(timerContext(state, 0, 0))).outputs).map(
      (l) => l.domain_name,
    );
  assert.deepEqual(await read(), ['example.com']);
  // A new stage object (a restart) with only the stored state.
  appendFileSync(path, `${text[9]}\n`);
  assert.deepEqual(await read(), ['xj3kq9zzp.example.org']);
  appendFileSync(path, `${text[10]}\n`);
  renameSync(path, join(dir, 'dns.2025-12-01-10-00-00.log'));
  // The new file uses another separator: only its own header can decode it.
  writeFileSync(
    path,
    '#separator \\x7c\n#fields|ts|id.orig_h|query|qtype_name|rcode_name\n2.0|10.3.3.3|new.example.com|A|NOERROR\n',
  );
  assert.deepEqual(await read(), ['www.example.net']);
  assert.deepEqual(await read(), ['new.example.com']);
});

test('suricata-eve: a query and its answer split across reads and a restart are paired once', async () => {
  const path = join(dir, 'eve.json');
  const text = readFileSync(fixture('suricata-eve-v2.json'), 'utf8').split('\n');
  writeFileSync(path, `${text[0]}\n`);
  const config = configFor(path, 'suricata-eve');
  const state = new MemoryState(['file_position']);
  const read = async () =>
    sent((await createLogserverStage({ config }).onTimer!(timerContext(state, 0, 0))).outputs);
  assert.deepEqual(await read(), []);
  appendFileSync(path, `${text[1]}\n`);
  const [line] = await read();
  assert.equal(line?.ts, '2025-12-01T10:00:00.100000Z', "the query's time");
  assert.equal(line?.src_ip, '10.0.0.5');
  assert.equal(line?.response_ip, '93.184.216.34');
});
