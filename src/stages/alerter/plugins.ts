import { parse } from 'tldts';
import { median } from '../detector/alerts.ts';
import type { Alert } from '../messages.ts';
import { domainOf } from '../detector/alerts.ts';
import { HamstringError } from '../../errors/hamstring-error.ts';

/**
 * An alerter plugin: adjusts an alert before it leaves, or drops it (`null`). Must be a pure
 * function of the alert and its options: a replay must give the same result, or a sink that
 * already holds the alert's id would keep the old version.
 */
export type AlertPlugin = (alert: Alert) => Alert | null;

/** A plugin's options are invalid: names the key path and what was expected. */
export class PluginConfigError extends HamstringError {
  override readonly name = 'PluginConfigError';
  readonly code = 'ALERT_PLUGIN_CONFIG';
}

type PluginFactory = (options: Record<string, unknown>, path: string) => AlertPlugin;

/** Keeps only warnings at or above `min_score` and recomputes the median; drops empty alerts. */
const minimumScore: PluginFactory = (options, path) => {
  const min = options.min_score;
  if (typeof min !== 'number' || min < 0 || min > 1)
    throw new PluginConfigError(
      `${path}.options.min_score: expected number between 0 and 1, got ${JSON.stringify(min)}`,
    );
  return (alert) =>
    withWarnings(
      alert,
      alert.result.filter((w) => w.probability >= min),
    );
};

/** Drops warnings for names under the listed registrable domains (known-good names of the site). */
const allowlist: PluginFactory = (options, path) => {
  const domains = options.domains;
  if (!Array.isArray(domains) || !domains.every((d) => typeof d === 'string'))
    throw new PluginConfigError(
      `${path}.options.domains: expected list of domain names, got ${JSON.stringify(domains)}`,
    );
  const allowed = new Set(domains.map((d) => d.toLowerCase()));
  return (alert) =>
    withWarnings(
      alert,
      alert.result.filter((w) => !allowed.has(parse((domainOf(w.request) ?? '').toLowerCase()).domain ?? '')),
    );
};

function withWarnings(alert: Alert, result: Alert['result']): Alert | null {
  if (result.length === 0) return null;
  if (result.length === alert.result.length) return alert;
  return { ...alert, result, overall_score: median(result.map((w) => w.probability)) };
}

/** Plugins by `alerter_class_name`. */
export const ALERT_PLUGINS: Readonly<Record<string, PluginFactory>> = {
  MinimumScoreAlerter: minimumScore,
  AllowlistAlerter: allowlist,
};

/**
 * Builds the plugin of one `pipeline.alerting.plugins[i]` entry.
 * @throws {@link PluginConfigError} for an unknown class or invalid options, naming the key path.
 */
export function alertPlugin(
  entry: { alerter_class_name: string; options: Record<string, unknown> },
  path: string,
): AlertPlugin {
  const factory = ALERT_PLUGINS[entry.alerter_class_name];
  if (!factory)
    throw new PluginConfigError(
      `${path}.alerter_class_name: expected one of ${Object.keys(ALERT_PLUGINS).join(', ')}, got ${JSON.stringify(entry.alerter_class_name)}`,
    );
  return factory(entry.options, path);
}
