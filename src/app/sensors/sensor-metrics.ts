import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Registry } from 'prom-client';
import { errorText } from '../../errors/error-text.ts';
import {
  admit,
  applyLimits,
  DEFAULT_HTTP_LIMITS,
  serverOptions,
  type HttpLimits,
} from '../../runtime/http-guard.ts';
import type { SensorCounters } from './sensor-runner.ts';

/**
 * A sensor's counters as Prometheus metrics, read from the runner at scrape time (no second set of
 * counters to keep in step), labelled with the sensor's name and kind so several sensors can be
 * scraped side by side.
 */
export interface MetricsTarget {
  readonly name: string;
  readonly kind: string;
  counters(): SensorCounters;
  /** Kind-specific counters (dnstap: pairing, unknown record types, connections). */
  extra?(): Readonly<Record<string, number>>;
}

const COUNTERS: ReadonlyArray<[keyof SensorCounters, string]> = [
  ['received', 'Units (dnstap frames, packets) read by the sensor'],
  ['malformed', 'Units or connections that could not be decoded (logged with a reason)'],
  ['ignored', 'Well-formed units that give no log line (type not observed, query awaiting its response)'],
  ['forwarded', 'Log lines acknowledged by Kafka'],
  ['dropped', 'Log lines dropped because the sensor buffer stayed full'],
  ['failed', 'Log lines the producer gave up on (Kafka unreachable past the message timeout)'],
];

export function sensorRegistry(targets: () => readonly MetricsTarget[]): Registry {
  const registry = new Registry();
  const labelNames = ['sensor', 'kind'] as const;
  for (const [field, help] of COUNTERS)
    new Counter({
      name: `hamstring_sensor_${field}_total`,
      help,
      labelNames,
      registers: [registry],
      collect() {
        this.reset();
        for (const t of targets()) this.inc({ sensor: t.name, kind: t.kind }, t.counters()[field]);
      },
    });
  new Gauge({
    name: 'hamstring_sensor_pending_lines',
    help: 'Log lines in the sensor buffer and the producer queue',
    labelNames,
    registers: [registry],
    collect() {
      for (const t of targets()) this.set({ sensor: t.name, kind: t.kind }, t.counters().pending);
    },
  });
  new Gauge({
    name: 'hamstring_sensor_detail',
    help: 'Kind-specific sensor counters and gauges, by name',
    labelNames: ['sensor', 'kind', 'counter'],
    registers: [registry],
    collect() {
      this.reset();
      for (const t of targets())
        for (const [counter, value] of Object.entries(t.extra?.() ?? {}))
          this.set({ sensor: t.name, kind: t.kind, counter }, value);
    },
  });
  return registry;
}

/**
 * `GET /metrics` on `host:port` (127.0.0.1 by default; 0 picks a free port), under the same request
 * limits as the health server and the dashboard (config `endpoints.limits`, see http-guard.ts).
 */
export async function serveMetrics(
  registry: Registry,
  port: number,
  limits: HttpLimits = DEFAULT_HTTP_LIMITS,
  host = '127.0.0.1',
): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer(serverOptions(limits), (req, res) => {
    if (!admit(req, res, { limits })) return;
    if (new URL(req.url ?? '/', 'http://sensor').pathname !== '/metrics') {
      res.writeHead(404).end('not found\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (e: unknown) => res.writeHead(500).end(`metrics: ${errorText(e)}\n`),
    );
  });
  applyLimits(server, limits);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
