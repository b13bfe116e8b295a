// Prints the Domainator's evaluation on tunnelling tools and benign subdomain-heavy services, at the
// threshold and window settings of the config's first DomainatorDetector entry (config.yaml unless
// --config), and at the best threshold. Options: --config F, --sessions N, --seed N, --max-queries N.
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config/index.ts';
import { evaluateDomainator, formatDomainatorReport } from '../src/traffic/tunnel/index.ts';

const { values } = parseArgs({
  options: {
    config: { type: 'string', default: 'config.yaml' },
    sessions: { type: 'string', default: '60' },
    seed: { type: 'string', default: '1' },
    'max-queries': { type: 'string', default: '100' },
    threshold: { type: 'string' },
  },
});
const config = loadConfig({ path: values.config, env: {} });
const detector = config.pipeline.data_analysis.find((d) => d.detector_class_name === 'DomainatorDetector');
const report = evaluateDomainator({
  seed: Number(values.seed),
  sessions: Number(values.sessions),
  maxQueries: Number(values['max-queries']),
  threshold: values.threshold !== undefined ? Number(values.threshold) : (detector?.threshold ?? 0.7),
  minWindow: detector?.domainator.min_window ?? 3,
  maxWindow: detector?.domainator.max_window ?? 10,
  idleTimeoutSeconds: detector?.domainator.idle_timeout_seconds ?? 300,
});
if (!detector) console.log(`(no DomainatorDetector in ${values.config}: defaults and threshold 0.7)\n`);
process.stdout.write(formatDomainatorReport(report));
