import { parsePrometheusText, type PromSample } from './prometheus-text.ts';

/**
 * Where the workers' Prometheus metrics come from: the URL of a `/metrics` endpoint (a worker
 * process's health server, see `startHealthServer`), or an in-process prom-client registry
 * (`TransactionalWorker.metrics.registry`). Both are read as text exposition, so one parser serves
 * both and a registry behaves exactly like what a scraper would see.
 */
export type MetricsSource = string | { metrics(): Promise<string> };

/**
 * The source of an in-process worker (`TransactionalWorker` fits). Its alert-condition and ready
 * gauges are brought up to date by `status()` (as the health server does before `/metrics`), so the
 * source calls it before each read; a bare registry would show them as of the last probe.
 */
export function workerMetricsSource(worker: {
  status(): unknown;
  readonly metrics: { readonly registry: { metrics(): Promise<string> } };
}): MetricsSource {
  return {
    metrics: () => {
      worker.status();
      return worker.metrics.registry.metrics();
    },
  };
}

/** A human label for a source (URLs as given; registries by position). */
export function sourceLabel(source: MetricsSource, index: number): string {
  return typeof source === 'string' ? source : `registry #${index + 1}`;
}

/**
 * Reads one source; rejects when the endpoint fails or does not answer within `timeoutMs`. `token`
 * goes with URL sources as `Authorization: Bearer` (health servers bound beyond loopback require it).
 */
export async function scrapeSource(
  source: MetricsSource,
  timeoutMs: number,
  token?: string,
): Promise<PromSample[]> {
  if (typeof source !== 'string') return parsePrometheusText(await source.metrics());
  const res = await fetch(source, {
    signal: AbortSignal.timeout(timeoutMs),
    ...(token !== undefined ? { headers: { authorization: `Bearer ${token}` } } : {}),
  });
  if (!res.ok) throw new Error(`GET ${source}: HTTP ${res.status}`);
  return parsePrometheusText(await res.text());
}
