import { z } from 'zod';
import { addProblem } from './refinements.ts';
import { whenPositiveIntegers } from './refinements.ts';
import {
  componentName,
  domainName,
  fraction,
  intBetween,
  nonEmptyString,
  positiveInt,
  positiveNumber,
} from './value-schemas.ts';
import {
  DEFAULT_WARNING_LATENESS_SECONDS,
  DEFAULT_WARNING_WINDOW_SECONDS,
  MAX_WARNING_WINDOW_SECONDS,
  minimumIdleTimeoutSeconds,
} from './warning-window.ts';

const SHA256_EXPECTED = 'SHA-256 hex digest (64 hex characters)';

// Python: a comma-separated string of alerter names, empty meaning the generic alerter.
const produceTopicsSchema = z
  .union([z.string(), z.array(z.string())], { error: 'alerter names (comma-separated string or list)' })
  .transform((value) =>
    (typeof value === 'string' ? value.split(',') : value).map((name) => name.trim()).filter(Boolean),
  )
  .pipe(z.array(componentName()))
  .transform((names) => (names.length > 0 ? names : ['generic']));

/** Detector classes this project implements (the Python class names). */
export const DETECTOR_CLASSES = ['DGADetector', 'DomainatorDetector'] as const;

const domainatorSchema = z
  .strictObject({
    /** Requests a second-level domain's window must hold before it is scored. */
    min_window: intBetween(2, 100).default(3),
    /** Requests kept per window (the oldest leaves first). */
    max_window: intBetween(2, 100).default(10),
    /** Seconds without a request after which a window is dropped. */
    idle_timeout_seconds: positiveNumber().default(300),
    /**
     * The network's own domains, as in its resolvers' search list: names under them are answered
     * by the network's DNS servers, so no tunnel can sit there, and every failed lookup of a name
     * with few dots comes back under them (`www.google.com.corp.example.com`), long and all
     * different like a tunnel's requests. Not windowed.
     */
    search_domains: z.array(domainName()).default([]),
  })
  .superRefine(
    (w, ctx) => {
      if (w.min_window > w.max_window)
        addProblem(ctx, ['min_window'], `integer <= max_window (${w.max_window})`, w.min_window);
    },
    { when: whenPositiveIntegers('min_window', 'max_window') },
  );

/** One `pipeline.data_analysis` entry: a DGA detector or a Domainator, with their window and rule keys. */
export const detectorSchema = z
  .strictObject({
    name: componentName(),
    detector_module_name: nonEmptyString(),
    detector_class_name: z.enum(DETECTOR_CLASSES, { error: DETECTOR_CLASSES.join(' or ') }),
    /** DGADetector: the model's name; its file is `model_path`, default `models/<model>.json`. */
    model: nonEmptyString().optional(),
    /** DGADetector: SHA-256 of the model file; a mismatch stops the stage at start. */
    checksum: z
      .string({ error: SHA256_EXPECTED })
      .regex(/^[0-9a-fA-F]{64}$/, { error: SHA256_EXPECTED })
      .optional(),
    /** The model file (absolute, or relative to the working directory). */
    model_path: nonEmptyString().optional(),
    /** Where the Python system downloads models from; kept for compatibility, never fetched. */
    base_url: z.url({ protocol: /^https?$/, error: 'http(s) URL' }).optional(),
    /** Score at or above which a request is a warning. */
    threshold: fraction(),
    /**
     * DGADetector: distinct names with a warning a host needs within one event-time window
     * (`warning_window_seconds`) to be alerted. 1 (the Python behaviour) alerts on a single
     * mistyped name; DGA malware resolves dozens of names per burst. The Domainator counts
     * warnings per suspicious batch.
     */
    min_warnings: positiveInt().default(1),
    /**
     * DGADetector: a second rule, also alerting a host with `min_warnings` distinct names scoring at
     * least `threshold` in a window, both looser and stricter than the entry's own: a lower score,
     * more names. A DGA resolves dozens of names per burst, so a family whose names score below the
     * entry's threshold is still found by their number.
     */
    weak_warnings: z.strictObject({ threshold: fraction(), min_warnings: positiveInt() }).optional(),
    /**
     * DGADetector: a third rule, alerting a host with `min_warnings` distinct names scoring at least
     * `threshold` under one domain (the registrable domain they sit under) in a window. Finds
     * families that put random labels under a few fixed domains (domain shadowing), whose names
     * look like a service's host ids one at a time. `exempt_domains`: domains under which the
     * network's hosts look up many names by design: its resolvers' search domains, and lookup
     * services that carry data in the name (blocklists, reputation services).
     */
    spread_warnings: z
      .strictObject({
        threshold: fraction(),
        min_warnings: positiveInt(),
        exempt_domains: z.array(domainName()).default([]),
      })
      .optional(),
    /**
     * DGADetector: length of the event-time window (the lines' own `ts`) the warnings are counted
     * in; default 300 (src/config/warning-window.ts). Alerts do not depend on how fast the lines
     * arrive or how they were batched.
     */
    warning_window_seconds: positiveInt(MAX_WARNING_WINDOW_SECONDS).optional(),
    /** DGADetector: how far a host's lines may come out of event-time order; default 60. */
    warning_lateness_seconds: intBetween(0, MAX_WARNING_WINDOW_SECONDS).optional(),
    /**
     * DGADetector: wall-clock seconds without a line after which a host's windows are dropped;
     * default and least 2 x `warning_window_seconds` + `warning_lateness_seconds`.
     */
    warning_idle_timeout_seconds: positiveNumber().optional(),
    inspector_name: nonEmptyString(),
    /** Alerter names; alerts go to `<detector_to_alerter prefix>-<name>`. */
    produce_topics: produceTopicsSchema.default(['generic']),
    /** DomainatorDetector: window sizes and expiry. */
    domainator: domainatorSchema.prefault({}),
  })
  .superRefine((detector, ctx) => {
    const idle = detector.warning_idle_timeout_seconds;
    const window = detector.warning_window_seconds ?? DEFAULT_WARNING_WINDOW_SECONDS;
    const lateness = detector.warning_lateness_seconds ?? DEFAULT_WARNING_LATENESS_SECONDS;
    if (idle !== undefined && idle < minimumIdleTimeoutSeconds(window, lateness))
      addProblem(
        ctx,
        ['warning_idle_timeout_seconds'],
        `number >= 2 x warning_window_seconds + warning_lateness_seconds (${minimumIdleTimeoutSeconds(window, lateness)})`,
        idle,
      );
    const weak = detector.weak_warnings;
    if (weak !== undefined && detector.detector_class_name !== 'DGADetector')
      addProblem(
        ctx,
        ['weak_warnings'],
        'no weak_warnings (only a DGADetector counts warnings in windows)',
        weak,
      );
    if (weak !== undefined && !(weak.threshold < detector.threshold))
      addProblem(
        ctx,
        ['weak_warnings', 'threshold'],
        `number below threshold (${detector.threshold})`,
        weak.threshold,
      );
    if (weak !== undefined && !(weak.min_warnings > detector.min_warnings))
      addProblem(
        ctx,
        ['weak_warnings', 'min_warnings'],
        `integer above min_warnings (${detector.min_warnings})`,
        weak.min_warnings,
      );
    if (detector.spread_warnings !== undefined && detector.detector_class_name !== 'DGADetector')
      addProblem(
        ctx,
        ['spread_warnings'],
        'no spread_warnings (only a DGADetector counts warnings in windows)',
        detector.spread_warnings,
      );
    if (detector.detector_class_name !== 'DGADetector') return;
    if (detector.model === undefined)
      addProblem(ctx, ['model'], 'model name (detector_class_name is DGADetector)', undefined);
    if (detector.checksum === undefined)
      addProblem(ctx, ['checksum'], `${SHA256_EXPECTED} (detector_class_name is DGADetector)`, undefined);
  });
