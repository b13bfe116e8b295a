import type { DomainatorReport, ThresholdResult } from './evaluate.ts';

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
const num = (x: number | null, digits = 0) => (x === null ? '-' : x.toFixed(digits));
const seconds = (x: number | null) =>
  x === null
    ? '-'
    : x < 120
      ? `${x.toFixed(0)} s`
      : x < 7200
        ? `${(x / 60).toFixed(0)} min`
        : `${(x / 3600).toFixed(1)} h`;

/** The report as a markdown section (for `npm run eval:dga`'s report and `scripts/eval-domainator.ts`). */
export function formatDomainatorReport(report: DomainatorReport): string {
  const { settings: s, shipped, best } = report;
  const lines = [
    '## Domainator: tunnelling and exfiltration',
    '',
    `${s.sessions} sessions (one host, one registrable domain) per style, seed ${s.seed}; window ` +
      `${s.minWindow}..${s.maxWindow} requests, idle timeout ${s.idleTimeoutSeconds} s; a tunnel ` +
      `session is detected when one of its first ${s.maxQueries} requests scores at least the ` +
      'threshold, a benign session is a false alarm when any of its requests does.',
    '',
    `Threshold ${shipped.threshold} (shipped): mean detection ${pct(shipped.meanDetectionRate)}, ` +
      `mean false alarms ${pct(shipped.meanFalseAlarmRate)}. Best threshold ${best.threshold} ` +
      `(max. mean detection - mean false alarms): ${pct(best.meanDetectionRate)}, ${pct(best.meanFalseAlarmRate)}.`,
    '',
    '| tunnel style | detected | median queries to detection | p90 | median time to detection | median max score | ' +
      `detected at ${best.threshold} |`,
    '| --- | --: | --: | --: | --: | --: | --: |',
    ...shipped.detection.map((d, i) => {
      const atBest = best.detection[i];
      return `| ${d.style} | ${pct(d.detectionRate)} | ${num(d.medianQueriesToDetection)} | ${num(d.p90QueriesToDetection)} | ${seconds(d.medianSecondsToDetection)} | ${num(d.medianMaxScore, 2)} | ${atBest ? pct(atBest.detectionRate) : '-'} |`;
    }),
    '',
    `| benign style | false alarms | highest score | p95 of session maxima | false alarms at ${best.threshold} |`,
    '| --- | --: | --: | --: | --: |',
    ...shipped.falseAlarms.map((f, i) => {
      const atBest = best.falseAlarms[i];
      return `| ${f.style} | ${pct(f.falseAlarmRate)} | ${num(f.maxScore, 2)} | ${num(f.p95MaxScore, 2)} | ${atBest ? pct(atBest.falseAlarmRate) : '-'} |`;
    }),
    '',
    'Styles:',
    '',
    ...styleList(shipped),
  ];
  return `${lines.join('\n')}\n`;
}

function styleList(r: ThresholdResult): string[] {
  return [...r.detection, ...r.falseAlarms].map((row) => `- \`${row.style}\`: ${row.description}`);
}
