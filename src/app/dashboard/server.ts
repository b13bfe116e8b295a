import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { extname } from 'node:path';
import { sourcePath } from '../../assets/project.ts';
import { bootstrapServers, type HamstringConfig } from '../../config/index.ts';
import { assertBindAllowed, endpointAccessToken } from '../../config/endpoint-access.ts';
import { errorText } from '../../errors/error-text.ts';
import { scrubSecrets } from '../../errors/secrets.ts';
import {
  admit,
  applyLimits,
  DEFAULT_HTTP_LIMITS,
  httpLimitsFromConfig,
  serverOptions,
  type HttpLimits,
} from '../../runtime/http-guard.ts';
import { createAdmin } from '../../kafka/admin.ts';
import type { ClickHouseTarget } from '../../monitoring/clickhouse-connection.ts';
import { clickhouseTargetsFromConfig } from '../../monitoring/clickhouse-target.ts';
import type { Logger } from '../../observability/logger.ts';
import { ClickHouseReader } from './clickhouse-reader.ts';
import { DashboardData } from './dashboard-data.ts';
import { DashboardQueries } from './dashboard-queries.ts';
import { MetricsHistory } from './metrics-history.ts';
import { DASHBOARD_PAGES, pageDocument } from './pages.ts';
import type { MetricsSource } from './metrics-source.ts';
import { StageInstances, stageGroupsOf } from './stage-instances.ts';

/** Options of {@link startDashboard}. */
export interface DashboardOptions {
  /** 0 picks a free port (see {@link Dashboard.url}). */
  port: number;
  /** Default 127.0.0.1. Another address needs `accessToken` (the start is refused with a ConfigError otherwise). */
  host?: string;
  /**
   * Every request must carry it: `Authorization: Bearer <token>`, or the cookie a browser gets by
   * opening a page once with `?access_token=<token>` (src/runtime/http-guard.ts). Also sent to the
   * workers' `/metrics` URLs: one token guards a deployment's endpoints.
   */
  accessToken?: string;
  /** Default DEFAULT_HTTP_LIMITS (slow clients, header and URL sizes). */
  limits?: Partial<HttpLimits>;
  /** The ClickHouse the monitoring agent writes to. */
  clickhouse: ClickHouseTarget;
  /** The other replicas of a replicated layout, read from in this order while `clickhouse` is down. */
  clickhouseReplicas?: readonly ClickHouseTarget[];
  /** The workers' metrics: `/metrics` URLs or in-process registries. None: the metric charts stay empty. */
  metricsSources?: readonly MetricsSource[];
  /** Page refresh and metrics sampling interval; default 2000 ms. */
  refreshMs?: number;
  /** How far back charts look; default 15 minutes. */
  windowMs?: number;
  /** The one detector configured, if there is only one: names the detector of every alert at once. */
  onlyDetector?: string;
  /** Every stage's instances, machines and partitions from its consumer group; none: not shown. */
  instances?: StageInstances;
  log: Logger;
}

/** A running dashboard. */
export interface Dashboard {
  /** `http://host:port/`, with the port actually bound. */
  readonly url: string;
  readonly port: number;
  /** The data behind the pages (the terminal view reads alerts and totals through it too). */
  readonly data: DashboardData;
  /** Stops sampling, closes the server and its connections, and the ClickHouse client. */
  close(): Promise<void>;
}

/** {@link DashboardOptions} from config.yaml's `dashboard` and ClickHouse keys. */
export function dashboardOptionsFromConfig(
  config: HamstringConfig,
  extra: { log: Logger; metricsSources?: readonly MetricsSource[]; database?: string },
): DashboardOptions {
  const accessToken = endpointAccessToken(config.endpoints);
  const [clickhouse, ...clickhouseReplicas] = clickhouseTargetsFromConfig(config, {
    ...(extra.database !== undefined ? { database: extra.database } : {}),
  });
  if (!clickhouse) throw new Error('no ClickHouse server configured');
  return {
    port: config.dashboard.port,
    host: config.dashboard.host,
    ...(accessToken !== undefined ? { accessToken } : {}),
    limits: httpLimitsFromConfig(config.endpoints),
    refreshMs: config.dashboard.refresh_ms,
    windowMs: config.dashboard.window_minutes * 60_000,
    clickhouse,
    ...(clickhouseReplicas.length > 0 ? { clickhouseReplicas } : {}),
    log: extra.log,
    ...(extra.metricsSources ? { metricsSources: extra.metricsSources } : {}),
    instances: new StageInstances(stageGroupsOf(config), () =>
      createAdmin(bootstrapServers(config), 'hamstring-dashboard'),
    ),
    ...(config.pipeline.data_analysis.length === 1
      ? { onlyDetector: config.pipeline.data_analysis[0]!.name }
      : {}),
  };
}

const PUBLIC_DIR = `${sourcePath('app/dashboard/public')}/`;
const require = createRequire(import.meta.url);
/** The charting library, served from node_modules: the pages need nothing from the internet. */
const VENDOR: Record<string, string> = {
  '/vendor/uPlot.esm.js': require.resolve('uplot/dist/uPlot.esm.js'),
  '/vendor/uPlot.min.css': require.resolve('uplot/dist/uPlot.min.css'),
};
const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/**
 * Serves the dashboard: the pipeline page (`/`), alerts (`/alerts?host=`), one host's lines
 * (`/host?ip=`), their JSON (`/api/pipeline`, `/api/alerts`, `/api/hosts`, `/api/host`,
 * `/api/config`) and static files. The pages poll the JSON every `refreshMs`.
 */
export async function startDashboard(options: DashboardOptions): Promise<Dashboard> {
  const bindHost = options.host ?? '127.0.0.1';
  assertBindAllowed(bindHost, options.accessToken, 'dashboard.host');
  const limits = { ...DEFAULT_HTTP_LIMITS, ...options.limits };
  const refreshMs = options.refreshMs ?? 2000;
  const windowMs = options.windowMs ?? 15 * 60_000;
  const log = options.log.child({ component: 'dashboard' });
  const reader = new ClickHouseReader([options.clickhouse, ...(options.clickhouseReplicas ?? [])]);
  const history =
    options.metricsSources && options.metricsSources.length > 0
      ? new MetricsHistory({
          sources: options.metricsSources,
          intervalMs: refreshMs,
          windowMs,
          log,
          ...(options.accessToken !== undefined ? { accessToken: options.accessToken } : {}),
        })
      : undefined;
  const data = new DashboardData(
    reader,
    new DashboardQueries(options.clickhouse.database),
    history,
    windowMs,
    options.onlyDetector,
  );
  const routes: Record<string, (q: URLSearchParams) => Promise<unknown>> = {
    '/api/config': () => Promise.resolve({ refreshMs, windowMs, metrics: history !== undefined }),
    '/api/pipeline': shared(() => data.pipeline(), refreshMs / 2),
    '/api/instances': shared(() => options.instances?.read() ?? Promise.resolve(null), refreshMs / 2),
    '/api/alerts': (q) => data.alerts({ ...optionalHost(q.get('host')), limit: limitOf(q, 200, 1000) }),
    '/api/hosts': (q) => data.hosts(limitOf(q, 100, 1000)),
    '/api/host': (q) => data.host(q.get('ip') ?? '', limitOf(q, 100, 500)),
  };

  const server = createServer(serverOptions(limits), (req, res) => {
    if (!admit(req, res, { token: options.accessToken, limits })) return;
    handle(req, res).catch((e: unknown) => {
      // The path only: a query string holds client IPs (DNS data), which only debug lines may show.
      log.warn({ path: pathOf(req.url), error: errorText(e) }, 'dashboard: request failed');
      log.debug({ url: req.url }, 'dashboard: the failed request');
      if (!res.headersSent)
        send(res, 503, 'application/json; charset=utf-8', JSON.stringify({ error: errorText(e) }));
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
    }
    const url = new URL(req.url ?? '/', 'http://dashboard');
    const route = routes[url.pathname];
    const tooLong = [...url.searchParams.values()].some((v) => v.length > MAX_PARAM_LENGTH);
    if (tooLong)
      return send(
        res,
        400,
        'text/plain; charset=utf-8',
        `query values: at most ${MAX_PARAM_LENGTH} characters\n`,
      );
    if (route)
      return send(res, 200, 'application/json; charset=utf-8', JSON.stringify(await route(url.searchParams)));
    const page = DASHBOARD_PAGES.find((p) => p.path === url.pathname);
    if (page) {
      const main = await readFile(PUBLIC_DIR + page.main, 'utf8');
      return send(res, 200, 'text/html; charset=utf-8', pageDocument(page, main));
    }
    const file = VENDOR[url.pathname] ?? publicFile(url.pathname);
    if (file === undefined) return send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
    const type = TYPES[extname(file)] ?? 'application/octet-stream';
    const body = await readFile(file).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return undefined;
      throw e;
    });
    if (body === undefined) return send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
    return send(res, 200, type, body);
  }

  applyLimits(server, limits);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, bindHost, () => {
      server.off('error', reject);
      resolve();
    });
  });
  history?.start();
  const port = (server.address() as AddressInfo).port;
  const shownHost = options.host === undefined || options.host === '0.0.0.0' ? '127.0.0.1' : options.host;
  const url = `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}/`;
  log.info({ url }, `dashboard: serving ${url}`);
  return {
    url,
    port,
    data,
    close: async () => {
      await history?.stop();
      await new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Pages poll over keep-alive connections; without this close() waits for them to time out.
        server.closeAllConnections();
      });
      await reader.close();
      options.instances?.close();
    },
  };
}

/**
 * Several open pages poll the same heavy queries: they share one run in flight and its answer for
 * `maxAgeMs`, so ClickHouse sees one query set per refresh however many tabs are open.
 */
function shared<T>(run: () => Promise<T>, maxAgeMs: number): () => Promise<T> {
  let inFlight: Promise<T> | undefined;
  let done: { at: number; value: T } | undefined;
  return () => {
    if (done && Date.now() - done.at < maxAgeMs) return Promise.resolve(done.value);
    inFlight ??= run()
      .then((value) => {
        done = { at: Date.now(), value };
        return value;
      })
      .finally(() => (inFlight = undefined));
    return inFlight;
  };
}

/** `/static/<name>` maps into the public folder; nothing else (no `..`). */
function publicFile(pathname: string): string | undefined {
  const m = /^\/static\/([a-z0-9-]+\.(?:js|css))$/.exec(pathname);
  return m ? PUBLIC_DIR + m[1] : undefined;
}

/** A host filter or limit is short; anything longer is a mistake or an attack, refused with 400. */
const MAX_PARAM_LENGTH = 256;

function pathOf(url: string | undefined): string {
  return (url ?? '/').split('?')[0] ?? '/';
}

function optionalHost(host: string | null): { host?: string } {
  return host === null || host.trim() === '' ? {} : { host: host.trim() };
}

function limitOf(q: URLSearchParams, fallback: number, max: number): number {
  const n = Number(q.get('limit'));
  return Number.isInteger(n) && n > 0 ? Math.min(n, max) : fallback;
}

function send(res: ServerResponse, status: number, contentType: string, body: string | Buffer): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  // An error text may quote a client's configuration: no secret reaches a page.
  res.end(res.req.method === 'HEAD' ? undefined : typeof body === 'string' ? scrubSecrets(body) : body);
}
