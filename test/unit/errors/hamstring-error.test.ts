import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HamstringError } from '../../../src/errors/hamstring-error.ts';
import { errorText } from '../../../src/errors/error-text.ts';
import { ConfigError } from '../../../src/config/errors.ts';
import { DecodeError, NonRetryableError, RecordError } from '../../../src/runtime/stage.ts';
import { ThreadPoolClosedError } from '../../../src/runtime/thread-pool.ts';
import { ReconnectStopped, RetriesExhausted } from '../../../src/runtime/kafka-session.ts';
import { StateConfigurationError } from '../../../src/runtime/state/changelog-topics.ts';
import { classifyKafkaError } from '../../../src/kafka/classify.ts';
import { ClickHouseUnavailable } from '../../../src/monitoring/clickhouse-connection.ts';
import { MonitoringRowError } from '../../../src/monitoring/events.ts';
import { PluginConfigError } from '../../../src/stages/alerter/plugins.ts';
import { WebhookRefusedError, WebhookUnavailableError } from '../../../src/stages/alerter/webhook.ts';
import { ModelChecksumError } from '../../../src/stages/detector/model/model-file.ts';
import { UnreplayableRecord } from '../../../src/app/dlt-replay.ts';
import { AbortPoll } from '../../../src/dev/poll.ts';
import { UsageError } from '../../../src/cli/command.ts';
import { IllegalTransactionCall } from '../../../src/runtime/worker/transaction.ts';
import { IllegalWorkerTransition } from '../../../src/runtime/worker/worker-lifecycle.ts';
import { ProcessingTimeout, StaleBatch } from '../../../src/runtime/worker/worker-context.ts';
import { RefusedOutputs } from '../../../src/runtime/record-errors/refused-outputs.ts';

test('every error HAMSTRING throws on purpose is a HamstringError with its own stable code and its class name', () => {
  const kafka = classifyKafkaError(new Error('boom'), 'consume');
  const errors: Error[] = [
    new ConfigError('config.yaml', []),
    new RecordError({ topic: 't', partition: 0, offset: 1 }, new Error('bad')),
    new NonRetryableError('no'),
    new DecodeError('not UTF-8'),
    new ThreadPoolClosedError('closed'),
    new RetriesExhausted(kafka, true),
    new ReconnectStopped('stop', kafka),
    new StateConfigurationError('partitions differ'),
    new ClickHouseUnavailable('down'),
    new MonitoringRowError('does not fit'),
    new PluginConfigError('bad option'),
    new WebhookRefusedError(400, 'bad request'),
    new WebhookUnavailableError('503'),
    new ModelChecksumError('m.json', 'a', 'b'),
    new UnreplayableRecord('no origin'),
    new AbortPoll(new Error('gave up')),
    new UsageError('bad flag'),
    new IllegalTransactionCall('ready', 'commit'),
    new IllegalWorkerTransition('stopped', 'running'),
    new StaleBatch('revoked'),
    new ProcessingTimeout('deadline'),
    new RefusedOutputs([], []),
  ];
  const codes = new Set<string>();
  for (const e of errors) {
    assert.ok(e instanceof HamstringError, `${e.name} extends HamstringError`);
    assert.equal(e.name, e.constructor.name);
    assert.match(e.code, /^[A-Z][A-Z_]+$/, `${e.name}: ${e.code}`);
    codes.add(e.code);
  }
  assert.equal(codes.size, errors.length, 'no two classes share a code');
  assert.equal(errorText(new DecodeError('not UTF-8')), 'DecodeError: not UTF-8');
  assert.equal(errorText('plain'), 'plain');
});
