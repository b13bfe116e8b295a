import { createSocket, type Socket } from 'node:dgram';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import dnsPacket from 'dns-packet';
import { sensorSchema, type HamstringConfig } from '../config/index.ts';
import { freePort } from '../dev/free-port.ts';
import { startUnbound, type RunningUnbound } from '../dev/unbound.ts';
import type { Logger } from '../observability/logger.ts';
import { generateTraffic, type HostTruth, type TrafficOptions } from '../traffic/index.ts';
import { Pacer } from './pacer.ts';
import { startSensor, type RunningSensor } from './sensors/start-sensor.ts';
import type { TrafficFeed } from './traffic-feed.ts';

export interface ResolverFeedOptions extends Omit<TrafficOptions, 'startMs'> {
  config: HamstringConfig;
  log: Logger;
  /** Unbound's configuration, its dnstap socket and its log go here (wiped first). */
  dir: string;
}

/** A generated line's question and the answer the generator gave it. */
interface Asked {
  readonly name: string;
  readonly type: 'A' | 'AAAA';
  readonly status: string;
  readonly answer: string;
}

/**
 * The generator's host `10.a.b.c` asks from `127.a.b.c`: every address of 127.0.0.0/8 is loopback,
 * so each simulated host is its own client to the resolver, and the /24 subnets stay as generated.
 */
export function loopbackOf(ip: string): string {
  return ip.replace(/^\d+\./, '127.');
}

/**
 * The live demo on a real resolver: a private Unbound (Debian's, with dnstap) answers the
 * generator's hosts from a static zone that holds every name the generator resolves (its answer as
 * data) and nothing else, so DGA names and typos get their NXDOMAIN from the resolver itself. Each
 * generated line becomes a real DNS query over UDP, sent when its event time comes from the host's
 * own loopback address; the resolver streams CLIENT_QUERY/CLIENT_RESPONSE over dnstap to a sensor
 * (`pipeline.sensors`' dnstap kind, started here) that writes the pipeline's log lines to the
 * logserver's input. What the pipeline sees is what the resolver saw: its clock, its addresses, its
 * answers. The truth is given with the loopback addresses the alerts will name.
 */
export async function startResolverFeed(o: ResolverFeedOptions): Promise<TrafficFeed> {
  rmSync(o.dir, { recursive: true, force: true });
  mkdirSync(o.dir, { recursive: true });
  const startMs = Date.now();
  const traffic = generateTraffic({ ...o, startMs });
  const asked = (line: string): Asked => {
    const l = JSON.parse(line) as Record<string, string>;
    return {
      name: l.domain_name ?? '',
      type: l.record_type === 'AAAA' ? 'AAAA' : 'A',
      status: l.status_code ?? '',
      answer: l.response_ip ?? '',
    };
  };
  const localData = new Set<string>();
  for (const g of traffic.lines()) {
    const q = asked(g.line);
    if (q.status === 'NOERROR' && q.name !== '') localData.add(`${q.name}. 300 IN ${q.type} ${q.answer}`);
  }

  const socketPath = join(o.dir, 'dnstap.sock');
  const sensor: RunningSensor = await startSensor(
    o.config,
    sensorSchema.parse({ name: 'demo-unbound', kind: 'dnstap', dnstap: { unix: socketPath } }),
    o.log,
  );
  let unbound: RunningUnbound;
  try {
    unbound = await startUnbound({
      dir: o.dir,
      port: await freePort(),
      dnstap: { unix: socketPath },
      identity: 'hamstring-demo',
      localZones: ['"." static'],
      localData: [...localData],
    });
  } catch (e) {
    await sensor.stop();
    throw e;
  }
  o.log.info(
    { event: 'resolver-demo', port: unbound.port, names: localData.size },
    `resolver demo: Unbound on 127.0.0.1:${unbound.port} answers ${localData.size} names, dnstap to the sensor`,
  );

  const sockets = new Map<string, Socket>();
  const socketOf = async (from: string): Promise<Socket> => {
    const known = sockets.get(from);
    if (known) return known;
    const socket = createSocket('udp4');
    // Answers are read and dropped: the resolver's dnstap stream is what the pipeline sees.
    socket.on('message', () => undefined);
    socket.on('error', (err) => o.log.warn({ err, from }, 'resolver demo: socket error'));
    await new Promise<void>((resolve) => socket.bind({ address: from, port: 0 }, resolve));
    sockets.set(from, socket);
    return socket;
  };

  let stopped = false;
  let sent = 0;
  const pacer = new Pacer(startMs);
  const run = async (): Promise<number> => {
    let id = 0;
    for (const g of traffic.lines()) {
      if (stopped) break;
      await pacer.due(g.atMs);
      if (stopped) break;
      const q = asked(g.line);
      const query = dnsPacket.encode({
        type: 'query',
        id: (id = (id + 1) % 65_536),
        flags: dnsPacket.RECURSION_DESIRED,
        questions: [{ type: q.type, name: q.name }],
      });
      (await socketOf(loopbackOf(g.srcIp))).send(query, unbound.port, '127.0.0.1');
      sent += 1;
    }
    return sent;
  };
  const done = run();
  let closing: Promise<number> | undefined;
  return {
    topic: sensor.topic,
    truth: traffic.truth.map((h): HostTruth => ({ ...h, ip: loopbackOf(h.ip) })),
    sent: () => sent,
    done,
    metrics: [sensor.registry],
    stop: () =>
      (closing ??= (async () => {
        stopped = true;
        pacer.stop();
        await done;
        // The last answers and their dnstap frames, then the sensor's lines to Kafka.
        await new Promise((r) => setTimeout(r, 500));
        for (const s of sockets.values()) s.close();
        await unbound.stop();
        const counters = await sensor.stop();
        o.log.info(
          { event: 'resolver-demo-stopped', counters },
          'resolver demo: Unbound and the sensor stopped',
        );
        return sent;
      })()),
  };
}
