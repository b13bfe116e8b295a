import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { formatPath } from './errors.ts';
import { hasLookaround, rewriteLookaround } from './lookaround.ts';
import { DOMAIN_NAME_PATTERN } from './log-line-format.ts';
import { asArray, asRecord } from './refinements.ts';
import { RE2JS } from 're2js';

/**
 * Reads a configuration written for the Python HAMSTRING (v2.0.0, and heiDGAF before it) as it is:
 * before the schema sees the tree, each setting this implementation cannot take literally is replaced
 * by what it does instead, and a warning names the key and the replacement. What stays (keys the
 * schema knows) keeps the schema's strict checks; a setting with no replacement is left for the
 * schema to refuse with its own error.
 */

/** One setting read differently from what it says: the key path and what is done instead. */
export interface ConfigWarning {
  /** Dotted key path with `[i]` for list indices, as in {@link ConfigIssue.path}. */
  readonly path: string;
  readonly message: string;
}

/** HAMSTRING v2.0.0's shipped `domain_name` pattern (with lookaround; Python `re`). */
export const V2_DOMAIN_NAME_PATTERN = '^(?=.{1,253}$)((?!-)[A-Za-z0-9-]{1,63}(?<!-)\\.)+[A-Za-z]{2,63}$';
const V2_DOMAIN_MAX_LENGTH = 253;

/** Where the DGA detector finds a model named `model` (see the detector's `modelFile`). */
const modelFile = (model: string) => resolve(`models/${model}.json`);
const SHIPPED_MODEL = 'dga-gbt';

type Tree = Record<string, unknown>;
type Warn = (path: readonly PropertyKey[], message: string) => void;

/** The tree to validate (a copy when anything changed) and the warnings. */
export function translateCompat(tree: unknown): { tree: unknown; warnings: ConfigWarning[] } {
  const warnings: ConfigWarning[] = [];
  const root = asRecord(tree);
  if (!root) return { tree, warnings };
  const copy = structuredClone(root);
  const warn: Warn = (path, message) => warnings.push({ path: formatPath(path), message });
  const pipeline = asRecord(copy.pipeline);
  if (pipeline) {
    translatePatterns(pipeline, warn);
    translateDetectors(pipeline, warn);
    translatePlugins(pipeline, warn);
    translateZeekSensors(pipeline, warn);
  }
  return warnings.length === 0 ? { tree, warnings } : { tree: copy, warnings };
}

function translatePatterns(pipeline: Tree, warn: Warn): void {
  asArray(asRecord(pipeline.log_collection)?.collectors).forEach((collector, c) => {
    for (const list of ['required_log_information', 'optional_log_information']) {
      asArray(asRecord(collector)?.[list]).forEach((entry, e) => {
        if (!Array.isArray(entry) || entry[1] !== 'RegEx' || typeof entry[2] !== 'string') return;
        const pattern = entry[2];
        if (!hasLookaround(pattern)) return;
        const path = ['pipeline', 'log_collection', 'collectors', c, list, e];
        const bound = typeof entry[3] === 'number' ? entry[3] : Infinity;
        if (pattern === V2_DOMAIN_NAME_PATTERN) {
          entry.splice(2, 2, DOMAIN_NAME_PATTERN, Math.min(bound, V2_DOMAIN_MAX_LENGTH));
          warn(
            [...path, 2],
            `HAMSTRING v2's domain_name pattern uses lookaround, which RE2 has not; using ` +
              `${DOMAIN_NAME_PATTERN} with a maximum length of ${V2_DOMAIN_MAX_LENGTH} (fourth element) ` +
              `instead: the same names, and IDN top-level labels (xn--p1ai) as well`,
          );
          return;
        }
        const rewrite = rewriteLookaround(pattern, (p) => RE2JS.compile(p).matcher('').lookingAt());
        if (!rewrite.ok || !compiles(rewrite.pattern)) return; // the schema names the key and the reason
        const max = Math.min(bound, rewrite.maxLength ?? Infinity);
        entry.splice(2, 2, rewrite.pattern, ...(max === Infinity ? [] : [max]));
        warn(
          [...path, 2],
          `lookaround rewritten for RE2 (${rewrite.changes.join('; ')}): using ${rewrite.pattern}` +
            (max === Infinity ? '' : ` with a maximum length of ${max} (fourth element)`),
        );
      });
    }
  });
}

function compiles(pattern: string): boolean {
  try {
    RE2JS.compile(pattern);
    return true;
  } catch {
    return false;
  }
}

// The Python system downloads pickled scikit-learn models from `base_url`; this one runs its own
// model files and never downloads.
function translateDetectors(pipeline: Tree, warn: Warn): void {
  asArray(pipeline.data_analysis).forEach((entry, d) => {
    const detector = asRecord(entry);
    if (!detector) return;
    const path = ['pipeline', 'data_analysis', d];
    if (typeof detector.base_url === 'string')
      warn(
        [...path, 'base_url'],
        'models are never downloaded; the model file comes from model / model_path',
      );
    if (detector.detector_class_name !== 'DGADetector' || detector.model_path !== undefined) return;
    const model = detector.model;
    if (typeof model !== 'string' || existsSync(modelFile(model))) return;
    const checksum = shippedChecksum();
    if (checksum === undefined) return; // the detector reports the missing file at start
    warn(
      [...path, 'model'],
      `no model file ${JSON.stringify(`models/${model}.json`)} (the Python models are scikit-learn pickles, ` +
        `which this implementation cannot run); using the shipped model ${JSON.stringify(SHIPPED_MODEL)} and its checksum instead`,
    );
    detector.model = SHIPPED_MODEL;
    detector.checksum = checksum;
  });
}

function shippedChecksum(): string | undefined {
  try {
    const text = readFileSync(`${modelFile(SHIPPED_MODEL)}.sha256`, 'utf8');
    return /^[0-9a-f]{64}/.exec(text)?.[0];
  } catch {
    return undefined;
  }
}

const PLUGIN_KEYS = new Set(['name', 'alerter_module_name', 'alerter_class_name', 'options']);

// Python plugins read their settings as flat keys of the entry; here they sit under `options`.
function translatePlugins(pipeline: Tree, warn: Warn): void {
  asArray(asRecord(pipeline.alerting)?.plugins).forEach((entry, p) => {
    const plugin = asRecord(entry);
    if (!plugin) return;
    const flat = Object.keys(plugin).filter((key) => !PLUGIN_KEYS.has(key));
    if (flat.length === 0) return;
    const options = asRecord(plugin.options) ?? {};
    for (const key of flat) {
      options[key] ??= plugin[key];
      delete plugin[key];
    }
    plugin.options = options;
    warn(
      ['pipeline', 'alerting', 'plugins', p],
      `plugin settings ${flat.join(', ')} read as options.${flat.join(', options.')} (where this implementation keeps them)`,
    );
  });
}

/**
 * Python's Zeek sensor with `static_analysis` reads the pcap directory mounted into its container;
 * here the directory is a key (`static_files_dir`). Such a sensor without one is left out, with a
 * warning, instead of refusing the whole file.
 */
function translateZeekSensors(pipeline: Tree, warn: Warn): void {
  const sensors = asRecord(asRecord(pipeline.zeek)?.sensors);
  if (!sensors) return;
  for (const [name, entry] of Object.entries(sensors)) {
    const sensor = asRecord(entry);
    if (sensor?.static_analysis !== true || sensor.static_files_dir !== undefined) continue;
    delete sensors[name];
    warn(
      ['pipeline', 'zeek', 'sensors', name],
      'static_analysis reads the pcap directory Python mounts into its container; without ' +
        'static_files_dir (the directory of pcap files) this sensor is not started',
    );
  }
}
