/**
 * `npm run eval:dga [-- --quick --no-rf --out docs/dga-evaluation.md]`: judges the DGA detector on
 * families and benign sources it never saw (leave-family-out, leave-source-out), at the threshold
 * whose false-positive rate on held-out real benign names is within budget (or at `--threshold`,
 * e.g. the shipped config's, to see what that one costs and finds); the host-level run, the
 * random-forest anchor, scoring speed, and the tunnelling detector's evaluation. Prints the report
 * and writes it with its two charts.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { scoreNames } from '../src/stages/detector/model/dga-model.ts';
import { spreadGroupOf } from '../src/stages/detector/spread-group.ts';
import type { WarningRule } from '../src/stages/detector/warning-window.ts';
import { BENIGN_SOURCES } from '../src/traffic/benign/index.ts';
import { DGA_FAMILIES } from '../src/traffic/dga-families.ts';
import { DEFAULT_NXDOMAIN_SHARE } from '../src/traffic/generator.ts';
import { seededRandom } from '../src/traffic/random.ts';
import { evaluateDomainator, formatDomainatorReport } from '../src/traffic/tunnel/index.ts';
import { loadConfig } from '../src/config/index.ts';
import { crossValidate, type CrossValidation } from './dga/cross-validate.ts';
import { DEFAULT_DATASET, benignSamples, maliciousSamples } from './dga/dataset.ts';
import { hostLevel, type HostLevelResult } from './dga/host-level.ts';
import { renderReport } from './dga/report.ts';
import { summarise, type Summary } from './dga/summary.ts';
import { barsSvg, rocSvg } from './dga/svg.ts';
import { featuresOf, DGA_GBT_OPTIONS } from './dga/train-model.ts';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    'no-rf': { type: 'boolean', default: false },
    out: { type: 'string', default: 'docs/dga-evaluation.md' },
    seed: { type: 'string', default: String(DEFAULT_DATASET.seed) },
    'fpr-budget': { type: 'string', default: '0.003' },
    threshold: { type: 'string' },
    'min-warnings': { type: 'string', default: '3' },
    'window-seconds': { type: 'string', default: '300' },
    /** `<threshold>:<names>`, `none`, or (default) the shipped DGA detector's `weak_warnings`. */
    'weak-warnings': { type: 'string' },
    /** `<threshold>:<names>`, `none`, or (default) the shipped DGA detector's `spread_warnings`. */
    'spread-warnings': { type: 'string' },
    /** Browser intranet-redirect probe sets per benign host and hour. */
    'browser-probes': { type: 'string', default: '1' },
    /** Share of benign lookups answered NXDOMAIN in the host-level run (default the generator's 3 %). */
    'nxdomain-share': { type: 'string' },
    /**
     * Users behind each host address (NAT, a proxy, a shared resolver client): each address looks up
     * and probes as many times as that many users, over proportionally fewer addresses.
     */
    'users-per-host': { type: 'string', default: '1' },
  },
});
const quick = values.quick === true;
const seed = Number(values.seed);
const fprBudget = Number(values['fpr-budget']);
const folds = 5;
const log = (line: string): void => console.error(line);

const perFamily = quick ? 150 : DEFAULT_DATASET.perFamily;
const perSource = quick ? 600 : DEFAULT_DATASET.perSource;
const samples = [...benignSamples(seed, perSource), ...maliciousSamples(seed, perFamily)];
const options = quick ? { ...DGA_GBT_OPTIONS, rounds: 40 } : DGA_GBT_OPTIONS;
log(`${samples.length} names; ${folds} folds; ${options.rounds} rounds per model`);
const cv = crossValidate(samples, { folds, options, log });

const structureOf = (family: string): string => DGA_FAMILIES.find((f) => f.name === family)?.structure ?? '';
const originOf = (source: string): string => BENIGN_SOURCES.find((s) => s.name === source)?.origin ?? '';
const fixed = values.threshold === undefined ? {} : { threshold: Number(values.threshold) };
const ours = summarise(cv, { fprBudget, structureOf, originOf, ...fixed });

/** The random forest on the same features and folds, by `bench/dga-rf/run.sh` (scikit-learn from PyPI). */
function forestSummary(c: CrossValidation): Summary | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'dga-rf-'));
  const csv = (rows: Float64Array[], labels: number[]): string =>
    `label,${Array.from(rows[0] ?? [], (_, i) => `f${i}`).join(',')}\n${rows
      .map((r, i) => `${labels[i] ?? 0},${Array.from(r, (v) => +v.toFixed(6)).join(',')}`)
      .join('\n')}\n`;
  for (let k = 0; k < c.folds; k += 1) {
    const model = c.models[k];
    const train = c.trainSets[k];
    if (!model || !train) continue;
    const test = c.heldOut.filter((h) => h.fold === k).map((h) => h.sample);
    writeFileSync(
      join(dir, `fold-${k}-train.csv`),
      csv(
        featuresOf(model, train),
        train.map((s) => s.malicious),
      ),
    );
    writeFileSync(
      join(dir, `fold-${k}-test.csv`),
      csv(
        featuresOf(model, test),
        test.map((s) => s.malicious),
      ),
    );
  }
  try {
    execFileSync('bash', ['bench/dga-rf/run.sh', dir], { stdio: ['ignore', 'inherit', 'inherit'] });
  } catch (e) {
    log(`random-forest anchor skipped: ${(e as Error).message}`);
    return undefined;
  }
  const heldOut = cv.heldOut.map((h) => ({ ...h }));
  for (let k = 0; k < c.folds; k += 1) {
    const scores = readFileSync(join(dir, `fold-${k}-rf.csv`), 'utf8')
      .trim()
      .split('\n')
      .map(Number);
    heldOut
      .filter((h) => h.fold === k)
      .forEach((h, i) => Object.assign(h, { score: scores[i] ?? 0, wwwScore: 0 }));
  }
  return summarise({ heldOut }, { fprBudget, structureOf, originOf, ...fixed });
}
const forest = values['no-rf'] ? undefined : forestSummary(cv);

const shippedDetectors = loadConfig({ path: 'config.yaml', env: {} }).pipeline.data_analysis;
const shippedDga = shippedDetectors.find((d) => d.detector_class_name === 'DGADetector');
const shippedDomainator = shippedDetectors.find((d) => d.detector_class_name === 'DomainatorDetector');
/**
 * A host rule from its option (`<threshold>:<names>` or `none`), else the shipped detector's keys
 * (`shipped`, undefined when the shipped config has no such rule).
 */
function ruleOption(
  option: 'weak-warnings' | 'spread-warnings',
  shipped: { threshold: number; min_warnings: number } | undefined,
): WarningRule | undefined {
  const text = values[option];
  if (text === 'none') return undefined;
  if (text === undefined)
    return shipped && { threshold: shipped.threshold, minWarnings: shipped.min_warnings };
  const [threshold, names] = text.split(':').map(Number);
  if (!(threshold !== undefined && threshold >= 0 && threshold <= 1 && names !== undefined && names >= 1))
    throw new Error(`--${option}: expected <threshold 0..1>:<names >= 1> or none, got ${text}`);
  return { threshold, minWarnings: names };
}
const weak = ruleOption('weak-warnings', shippedDga?.weak_warnings);
const spreadCounts = ruleOption('spread-warnings', shippedDga?.spread_warnings);
const spread = spreadCounts && {
  ...spreadCounts,
  groupOf: spreadGroupOf(shippedDga?.spread_warnings?.exempt_domains ?? []),
};
const browserProbes = Number(values['browser-probes']);
const nxdomainShare = values['nxdomain-share'] === undefined ? undefined : Number(values['nxdomain-share']);
const usersPerHost = Number(values['users-per-host']);
if (!Number.isInteger(usersPerHost) || usersPerHost < 1)
  throw new Error(`--users-per-host: expected an integer >= 1, got ${values['users-per-host']}`);

/** Host level: every fold's families on infected hosts, benign hosts on that fold's held-out sources. */
function hostLevelAll(): HostLevelResult {
  const total = {
    infected: 0,
    infectedFound: 0,
    missed: [] as string[],
    benignHosts: 0,
    benignAccused: 0,
    hostHours: 0,
    accusedNames: [] as string[],
    lines: 0,
    both: {
      infectedFound: 0,
      missed: [] as string[],
      benignAccused: 0,
      domainatorAccusedNames: [] as string[],
    },
  };
  for (let k = 0; k < folds; k += 1) {
    const model = cv.models[k];
    if (!model) continue;
    const families = [...cv.familyFold].filter(([, f]) => f === k).map(([name]) => name);
    const sources = [...cv.sourceFold].filter(([, f]) => f === k).map(([name]) => name);
    const random = seededRandom(seed + k);
    const names = BENIGN_SOURCES.filter((s) => sources.includes(s.name)).flatMap((s) =>
      s.names(seed + 7, 3000),
    );
    for (let i = names.length - 1; i > 0; i -= 1) {
      const j = random.int(0, i);
      [names[i], names[j]] = [names[j] as string, names[i] as string];
    }
    const r = hostLevel({
      seed: seed + k,
      families,
      benignHosts: Math.max(1, Math.round((quick ? 200 : 2000) / usersPerHost)),
      hours: quick ? 0.25 : 1,
      perHostRate: 0.2 * usersPerHost,
      benignNames: names,
      score: (n) => scoreNames(model, n),
      threshold: ours.threshold,
      minWarnings: Number(values['min-warnings']),
      windowSeconds: Number(values['window-seconds']),
      weak,
      spread,
      browserProbes: browserProbes * usersPerHost,
      nxdomainShare,
      domainator: shippedDomainator && {
        threshold: shippedDomainator.threshold,
        minWindow: shippedDomainator.domainator.min_window,
        maxWindow: shippedDomainator.domainator.max_window,
        idleTimeoutSeconds: shippedDomainator.domainator.idle_timeout_seconds,
        searchDomains: shippedDomainator.domainator.search_domains,
      },
    });
    total.infected += r.infected;
    total.infectedFound += r.infectedFound;
    total.missed.push(...r.missed);
    total.benignHosts += r.benignHosts;
    total.benignAccused += r.benignAccused;
    total.hostHours += r.hostHours;
    total.accusedNames.push(...r.accusedNames);
    total.lines += r.lines;
    if (r.both) {
      total.both.infectedFound += r.both.infectedFound;
      total.both.missed.push(...r.both.missed);
      total.both.benignAccused += r.both.benignAccused;
      total.both.domainatorAccusedNames.push(...r.both.domainatorAccusedNames);
    }
    log(
      `host level, fold ${k + 1}: ${r.infectedFound}/${r.infected} infected found, ${r.benignAccused}/${r.benignHosts} benign accused` +
        (r.both
          ? `; with the Domainator ${r.both.infectedFound} found, ${r.both.benignAccused} accused`
          : ''),
    );
  }
  const { both, ...dgaOnly } = total;
  return shippedDomainator ? { ...dgaOnly, both } : dgaOnly;
}
const hostResult = hostLevelAll();

/** Names per second on this thread: features and trees, as the detector's scoring thread runs them. */
function speed(): { namesPerSecond: number; names: number } {
  const model = cv.models[0];
  const names = samples.slice(0, 20_000).map((s) => s.domain);
  if (!model) return { namesPerSecond: 0, names: 0 };
  scoreNames(model, names);
  const t0 = performance.now();
  scoreNames(model, names);
  scoreNames(model, names);
  return { namesPerSecond: (2 * names.length * 1000) / (performance.now() - t0), names: names.length };
}

/** The tunnelling detector on tool styles and benign subdomain-heavy services, at the shipped settings. */
function domainatorSection(): string {
  const report = evaluateDomainator({
    seed,
    sessions: quick ? 10 : 60,
    threshold: shippedDomainator?.threshold ?? 0.8,
    minWindow: shippedDomainator?.domainator.min_window ?? 3,
    maxWindow: shippedDomainator?.domainator.max_window ?? 10,
    idleTimeoutSeconds: shippedDomainator?.domainator.idle_timeout_seconds ?? 600,
  });
  return `## Tunnelling: the Domainator, evaluated the same way\n\nAt the shipped config's settings (\`scripts/eval-domainator.ts\` prints the same alone).\n\n${formatDomainatorReport(report).replace(/^#+ .*\n/, '')}`;
}

const report = renderReport({
  command: `npm run eval:dga${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
  dataset: {
    benign: samples.filter((s) => s.malicious === 0).length,
    malicious: samples.filter((s) => s.malicious === 1).length,
    families: DGA_FAMILIES.length,
    sources: BENIGN_SOURCES.length,
    folds,
  },
  ours,
  ...(forest ? { forest } : {}),
  hostLevel: {
    result: hostResult,
    minWarnings: Number(values['min-warnings']),
    windowSeconds: Number(values['window-seconds']),
    weak,
    spread,
    browserProbes,
    nxdomainShare: nxdomainShare ?? DEFAULT_NXDOMAIN_SHARE,
    usersPerHost,
  },
  speed: speed(),
  sourceDescriptions: new Map(BENIGN_SOURCES.map((s) => [s.name, `${s.origin}: ${s.description}`])),
  extraSections: [domainatorSection()],
});
console.log(report);
const out = values.out;
mkdirSync(join(dirname(out), 'img'), { recursive: true });
writeFileSync(out, report);
writeFileSync(
  join(dirname(out), 'img', 'dga-roc.svg'),
  rocSvg(
    [
      { label: `boosted trees (AUC ${ours.roc.auc.toFixed(4)})`, points: ours.roc.curve },
      ...(forest
        ? [{ label: `random forest (AUC ${forest.roc.auc.toFixed(4)})`, points: forest.roc.curve }]
        : []),
    ],
    { fpr: ours.pooled.realFpr, tpr: ours.meanRecall.all, label: `threshold ${ours.threshold.toFixed(3)}` },
  ),
);
writeFileSync(
  join(dirname(out), 'img', 'dga-family-recall.svg'),
  barsSvg(
    ours.families.map((f) => ({ label: `${f.family} (${f.kind})`, value: f.recall })),
    0.95,
  ),
);
// The committed report is formatted like every other document of the repository.
execFileSync('npx', ['prettier', '--write', out], { stdio: 'ignore' });
log(`report written to ${out}`);
