import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { connect, type TLSSocket } from 'node:tls';
import { startSensor, type RunningSensor } from '../../../src/app/sensors/start-sensor.ts';
import { validateConfig, type HamstringConfig } from '../../../src/config/index.ts';
import { digBatch } from '../../../src/dev/dns-load.ts';
import { createKafkaCertificates, type KafkaCertificates } from '../../../src/dev/kafka-tls.ts';
import { startUnbound } from '../../../src/dev/unbound.ts';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import {
  CONTROL,
  DNSTAP_CONTENT_TYPE,
  encodeControl,
  encodeData,
  FrameDecoder,
} from '../../../src/sources/dnstap/frame-streams.ts';
import { clientPair } from '../../support/dnstap-frames.ts';
import { freePort } from '../../helpers/free-port.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { readTopicLines } from '../../helpers/topic-lines.ts';
import { uniqueTopic } from '../../helpers/names.ts';
import { waitFor } from '../../helpers/wait-for.ts';

/**
 * The dnstap sensor's TCP listener with mutual TLS, configured in config.yaml's form: a sender with
 * a certificate the configured CA signed delivers frames whose lines reach the input topic; a
 * sender without a certificate, and one whose certificate another CA signed, are refused in the
 * handshake, and no line of theirs reaches the topic. Then the same with a real resolver: Debian's
 * Unbound sending dnstap over TLS with a client certificate (dnstap-tls-client-cert-file), once
 * with a trusted one and once with another CA's. Certificates come from openssl
 * (createKafkaCertificates: a CA, a server certificate for 127.0.0.1 and localhost, a client
 * certificate).
 */

let dir: string;
let certs: KafkaCertificates;
let stranger: KafkaCertificates;
let bootstrap: string;
let topic: string;
let config: HamstringConfig;
let sensor: RunningSensor | undefined;
let port: number;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dnstap-tls-'));
  certs = createKafkaCertificates(join(dir, 'trusted'), 'resolver-1');
  stranger = createKafkaCertificates(join(dir, 'stranger'), 'resolver-x');
  bootstrap = (await testKafka()).bootstrap;
  const prefix = uniqueTopic('sensor-tls');
  topic = `${prefix}-dns`;
  const admin = createAdmin(bootstrap);
  try {
    await admin.createTopics([{ topic, partitions: 1, replicationFactor: 1 }]);
  } finally {
    admin.close();
  }
  port = await freePort();
  config = validateConfig(
    {
      environment: {
        kafka_bootstrap_servers: bootstrap,
        kafka_topics_prefix: { pipeline: { logserver_in: prefix } },
        monitoring: { clickhouse_server: { hostname: '127.0.0.1' } },
      },
      pipeline: {
        sensors: [
          {
            name: 'tls-sensor',
            kind: 'dnstap',
            protocol: 'dns',
            log_interval_seconds: 3600,
            dnstap: {
              tcp: `127.0.0.1:${port}`,
              tls: {
                // The server certificate and its key in one PEM file, as many operators keep them.
                certificate_file: certs.brokerKeystore,
                key_file: certs.brokerKeystore,
                client_ca_file: certs.caCert,
              },
            },
          },
        ],
      },
    },
    { env: {} },
  );
  const entry = config.pipeline.sensors[0];
  assert.ok(entry !== undefined);
  sensor = await startSensor(config, entry, silentLogger());
});

after(async () => {
  await sensor?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** What a sender saw: the connection's end and the Frame Streams control frames it was sent. */
interface Outcome {
  readonly authorized: boolean;
  readonly replies: number[];
  readonly error?: string;
}

/**
 * One Frame Streams session over TLS (READY, START, the lines' frames, STOP) for `names`, each a
 * CLIENT_RESPONSE from its own client address. Resolves when the sensor answered FINISH or the
 * connection ended.
 */
async function send(
  names: readonly string[],
  client: { cert?: string; key?: string },
  clientIp: string,
): Promise<Outcome> {
  const socket: TLSSocket = connect({
    host: '127.0.0.1',
    port,
    ca: readFileSync(certs.caCert),
    ...(client.cert !== undefined ? { cert: readFileSync(client.cert) } : {}),
    ...(client.key !== undefined ? { key: readFileSync(client.key) } : {}),
  });
  const decoder = new FrameDecoder();
  const replies: number[] = [];
  let error: string | undefined;
  return new Promise<Outcome>((resolve) => {
    const done = () => resolve({ authorized: socket.authorized, replies, ...(error ? { error } : {}) });
    socket.on('error', (e: Error) => {
      error = e.message;
    });
    socket.on('close', done);
    socket.on('data', (b: Buffer) => {
      for (const e of decoder.push(b)) {
        if (e.kind !== 'control') continue;
        replies.push(e.type);
        if (e.type === CONTROL.ACCEPT) {
          socket.write(encodeControl(CONTROL.START, [DNSTAP_CONTENT_TYPE]));
          names.forEach((name, i) => {
            const pair = clientPair(clientIp, 2000 + i, i, name, {
              answers: [{ type: 'A', name, data: '192.0.2.7' }],
            });
            socket.write(encodeData(Buffer.from(pair.response)));
          });
          socket.write(encodeControl(CONTROL.STOP));
        }
        if (e.type === CONTROL.FINISH) socket.end();
      }
    });
    socket.once('secureConnect', () => socket.write(encodeControl(CONTROL.READY, [DNSTAP_CONTENT_TYPE])));
  });
}

/** The input topic's lines, read until `done` says enough, and a little more (see readTopicLines). */
const readLines = (
  done: (lines: readonly Record<string, string>[]) => boolean,
  clientId: string,
): Promise<Record<string, string>[]> => readTopicLines({ bootstrap, topic, clientId, done });

test('mutual TLS: a trusted sender is read; no certificate and an untrusted one are refused', async () => {
  const running = sensor;
  assert.ok(running !== undefined);
  const trusted = Array.from({ length: 20 }, (_, i) => `trusted${i}.tls.test`);

  const refused = async () =>
    Number(/counter="refused_connections"\} (\d+)/.exec(await running.registry.metrics())?.[1]);

  const noCert = await send(['nocert.tls.test'], {}, '127.0.0.21');
  assert.deepEqual(noCert.replies, [], 'the sensor answered nothing to a sender without a certificate');
  await waitFor(async () => (await refused()) === 1, { message: 'one refused connection', timeoutMs: 5000 });

  const untrusted = await send(
    ['untrusted.tls.test'],
    { cert: stranger.clientCert, key: stranger.clientKey },
    '127.0.0.22',
  );
  assert.deepEqual(untrusted.replies, [], "the sensor answered nothing to another CA's certificate");
  await waitFor(async () => (await refused()) === 2, { message: 'two refused connections', timeoutMs: 5000 });

  const good = await send(trusted, { cert: certs.clientCert, key: certs.clientKey }, '127.0.0.20');
  assert.equal(good.error, undefined);
  assert.ok(good.authorized, 'the sender verified the sensor against the CA');
  assert.deepEqual(good.replies, [CONTROL.ACCEPT, CONTROL.FINISH]);

  await waitFor(() => running.runner.counters().forwarded === trusted.length, {
    message: 'the trusted lines forwarded',
    timeoutMs: 30_000,
  });
  assert.equal(await refused(), 2);
  const c = running.runner.counters();
  assert.equal(c.received, trusted.length, 'not one frame of a refused sender was read');
  assert.equal(c.malformed, 0);

  const lines = await readLines((l) => l.length >= trusted.length, 'dnstap-tls-check');
  assert.deepEqual(lines.map((l) => l.domain_name).sort(), [...trusted].sort());
  assert.ok(lines.every((l) => l.src_ip === '127.0.0.20'));
});

test('Unbound over dnstap-tls: its client certificate decides whether its lines arrive', async () => {
  const running = sensor;
  assert.ok(running !== undefined);
  const zone = 'tls.hamstring.test';
  const refusedBefore = Number(
    /counter="refused_connections"\} (\d+)/.exec(await running.registry.metrics())?.[1],
  );
  const resolver = async (name: string, client: KafkaCertificates) => {
    const resolverDir = mkdtempSync(join(dir, `${name}-`));
    const dnsPort = await freePort();
    const unbound = await startUnbound({
      dir: resolverDir,
      port: dnsPort,
      identity: name,
      dnstap: {
        tcp: {
          host: '127.0.0.1',
          port,
          tls: {
            serverName: 'localhost',
            caFile: certs.caCert,
            certFile: client.clientCert,
            keyFile: client.clientKey,
          },
        },
      },
      localZones: [`"${zone}." static`],
      localData: [`www.${zone}. 300 IN A 192.0.2.44`],
    });
    return {
      unbound,
      ask: (from: string) =>
        digBatch({
          dir: resolverDir,
          server: '127.0.0.1',
          port: dnsPort,
          queries: [{ from, name: `www.${zone}`, type: 'A' }],
        }),
    };
  };

  const stranger1 = await resolver('unbound-stranger', stranger);
  try {
    // Unbound connects at start and again with a back-off: each attempt is refused.
    await waitFor(
      async () =>
        Number(/counter="refused_connections"\} (\d+)/.exec(await running.registry.metrics())?.[1]) >
        refusedBefore,
      { message: "Unbound with another CA's certificate refused", timeoutMs: 30_000 },
    );
    await stranger1.ask('127.0.0.31');
  } finally {
    await stranger1.unbound.stop();
  }

  const forwardedBefore = running.runner.counters().forwarded;
  const trusted = await resolver('unbound-trusted', certs);
  const hosts = ['127.0.0.41', '127.0.0.42', '127.0.0.43'];
  try {
    // Unbound drops dnstap messages until its TLS connection is up: ask until a line arrives.
    await waitFor(
      async () => {
        await trusted.ask(hosts[0] ?? '');
        return running.runner.counters().forwarded > forwardedBefore;
      },
      { message: "the trusted Unbound's first line", timeoutMs: 30_000, intervalMs: 500 },
    );
    const upAt = running.runner.counters().forwarded;
    for (const from of hosts.slice(1)) await trusted.ask(from);
    // Unbound drops what its dnstap thread still holds when it stops: wait for the lines first.
    await waitFor(() => running.runner.counters().forwarded >= upAt + hosts.length - 1, {
      message: "the trusted Unbound's other lines",
      timeoutMs: 30_000,
    });
  } finally {
    await trusted.unbound.stop();
  }
  const fromUnbound = (lines: readonly Record<string, string>[]) =>
    lines.filter((l) => l.domain_name === `www.${zone}`);
  const lines = await readLines(
    (l) => new Set(fromUnbound(l).map((x) => x.src_ip)).size >= hosts.length,
    'dnstap-tls-unbound-check',
  );
  assert.deepEqual([...new Set(fromUnbound(lines).map((l) => l.src_ip))].sort(), hosts);
  assert.ok(fromUnbound(lines).every((l) => l.response_ip === '192.0.2.44'));
  assert.ok(
    !lines.some((l) => l.src_ip === '127.0.0.31'),
    'no line from the Unbound whose certificate another CA signed',
  );
});
