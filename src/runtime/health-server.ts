import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { assertBindAllowed } from '../config/endpoint-access.ts';
import { errorText } from '../errors/error-text.ts';
import { scrubSecrets } from '../errors/secrets.ts';
import { processRegistry } from './process-metrics.ts';
import { admit, applyLimits, DEFAULT_HTTP_LIMITS, serverOptions, type HttpLimits } from './http-guard.ts';
import type { WorkerStatus } from './worker/transactional-worker.ts';
import type { WorkerMetrics } from './worker-metrics.ts';

/** What the health server needs of a worker; `TransactionalWorker` fits. */
export interface HealthTarget {
  status(): WorkerStatus;
  readonly metrics: WorkerMetrics;
}

/** Options of {@link startHealthServer}. */
export interface HealthServerOptions {
  /** 0 picks a free port (see {@link HealthServer.port}). */
  port: number;
  /**
   * Default 127.0.0.1. Another address (0.0.0.0 in a container, so the orchestrator's probes reach
   * it) needs `accessToken`: the start is refused with a ConfigError otherwise.
   */
  host?: string;
  /** Every request must carry it (see http-guard.ts); probes send `Authorization: Bearer <token>`. */
  accessToken?: string;
  /** The config key or option that set `host`, named in the refusal; default `runtime.health_host`. */
  hostKey?: string;
  /** Default {@link DEFAULT_HTTP_LIMITS}. */
  limits?: Partial<HttpLimits>;
  /** Asked on every request, so workers started or replaced later are seen. */
  workers: () => readonly HealthTarget[];
  /** false: /metrics leaves out the process's own series (memory, CPU, heap, event loop). Default true. */
  processMetrics?: boolean;
}

/** A running health server. */
export interface HealthServer {
  /** The port actually bound. */
  readonly port: number;
  close(): Promise<void>;
}

/** One worker in the JSON body of /livez and /readyz. */
export interface WorkerHealth {
  stage: string;
  instanceId: string;
  state: WorkerStatus['state'];
  live: boolean;
  ready: boolean;
  epoch: number;
  assigned: string[];
  lastCommitAt: string | null;
  alerts: WorkerStatus['alerts'];
  failure?: string;
  /** Why it is not ready: failed with which reason, reconnecting to which address since when, ... */
  notReady?: string;
  /** Partitions of its subscribed topics nobody has owned for longer than the alert bound. */
  unowned?: string[];
}

/**
 * Serves the process's probes and metrics over HTTP (limits and access token: http-guard.ts):
 * - `GET /livez`: 200 when every worker is live (none failed, none stuck), else 503.
 * - `GET /readyz`: 200 when there is at least one worker and every worker is ready (running,
 *   assigned, and its Kafka clients not cut off from every broker), else 503; a worker that is not
 *   says why in `notReady`.
 *   Both answer `{ ok, workers: WorkerHealth[] }`.
 * - `GET /metrics`: every worker's registry in one Prometheus exposition. Series stay apart through
 *   each registry's `stage` and `instance` default labels. Then the process's own series
 *   (process-metrics.ts) unless `processMetrics` is false.
 */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const host = options.host ?? '127.0.0.1';
  assertBindAllowed(host, options.accessToken, options.hostKey ?? 'runtime.health_host');
  const limits = { ...DEFAULT_HTTP_LIMITS, ...options.limits };
  const server = createServer(serverOptions(limits), (req, res) => {
    if (!admit(req, res, { token: options.accessToken, limits })) return;
    handle(req, res, options.workers, options.processMetrics !== false).catch((e: unknown) => {
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', `health: ${errorText(e)}\n`);
      else res.destroy();
    });
  });
  applyLimits(server, limits);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Scrapers keep connections alive; without this close() would wait for them to time out.
        server.closeAllConnections();
      }),
  };
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  workers: HealthServerOptions['workers'],
  processMetrics: boolean,
): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://health').pathname;
  if (path !== '/livez' && path !== '/readyz' && path !== '/metrics')
    return send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
  }
  const targets = workers();
  // status() also refreshes the alert and ready gauges, so /metrics reports what /readyz would.
  const statuses = targets.map((w) => w.status());
  if (path === '/metrics') {
    const registry = await mergedRegistry(targets.map((w) => w.metrics.registry));
    // Kept apart from the aggregation, which drops series that cannot be summed (the start time);
    // the two share no metric name, so one after the other is one valid exposition.
    const own = processMetrics ? await processRegistry().metrics() : '';
    return send(res, 200, registry.contentType, `${await registry.metrics()}${own}`);
  }
  const ok =
    path === '/livez' ? statuses.every((s) => s.live) : statuses.length > 0 && statuses.every((s) => s.ready);
  const body = JSON.stringify({ ok, workers: statuses.map(toHealth) });
  return send(res, ok ? 200 : 503, 'application/json; charset=utf-8', `${body}\n`);
}

/**
 * `Registry.merge` rejects registries holding the same metric names, and plain concatenation would
 * repeat HELP/TYPE lines (invalid exposition); aggregating the JSON form groups series per metric.
 */
async function mergedRegistry(registries: Registry[]): Promise<Registry> {
  const metrics = await Promise.all(registries.map((r) => r.getMetricsAsJSON()));
  // WorkerMetrics registries use the default (Prometheus text) content type, as does the result.
  return AggregatorRegistry.aggregate(metrics);
}

function toHealth(s: WorkerStatus): WorkerHealth {
  return {
    stage: s.stage,
    instanceId: s.instanceId,
    state: s.state,
    live: s.live,
    ready: s.ready,
    epoch: s.epoch,
    assigned: s.assigned,
    lastCommitAt: s.lastCommitAt === undefined ? null : new Date(s.lastCommitAt).toISOString(),
    alerts: s.alerts,
    ...(s.failure !== undefined ? { failure: s.failure } : {}),
    ...(s.notReady !== undefined ? { notReady: s.notReady } : {}),
    ...(s.unowned !== undefined ? { unowned: s.unowned } : {}),
  };
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  // A failure text or a metric label may quote a client's configuration: no secret leaves here.
  res.end(res.req.method === 'HEAD' ? undefined : scrubSecrets(body));
}
