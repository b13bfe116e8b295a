/** The evaluation report as markdown (pure: figures in, text out). */
import type { WarningRule } from '../../src/stages/detector/warning-window.ts';
import type { HostLevelResult } from './host-level.ts';
import { pct } from './metrics.ts';
import type { Summary } from './summary.ts';

export interface ReportInput {
  readonly command: string;
  readonly dataset: { benign: number; malicious: number; families: number; sources: number; folds: number };
  readonly ours: Summary;
  readonly forest?: Summary;
  readonly hostLevel?: {
    result: HostLevelResult;
    minWarnings: number;
    windowSeconds: number;
    weak: WarningRule | undefined;
    spread: WarningRule | undefined;
    browserProbes: number;
    /** Share of benign lookups answered NXDOMAIN. */
    nxdomainShare: number;
    /** Users behind each host address: its lookups and probes are that many users'. */
    usersPerHost: number;
  };
  readonly speed?: { namesPerSecond: number; names: number };
  readonly sourceDescriptions: ReadonlyMap<string, string>;
  readonly extraSections?: readonly string[];
}

const table = (head: readonly string[], rows: readonly (readonly string[])[]): string =>
  [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');

export function renderReport(r: ReportInput): string {
  const s = r.ours;
  const out: string[] = [];
  out.push('# DGA detector: evaluation on families and sources it never saw');
  out.push('');
  out.push(
    `Made by \`${r.command}\`. Every figure below comes from a model that was trained without the family`,
  );
  out.push(
    `or the benign source it is measured on: ${r.dataset.families} DGA families and ${r.dataset.sources} benign sources are`,
  );
  out.push(
    `dealt into ${r.dataset.folds} folds, and each fold's model is trained on the other folds only (whole families and`,
  );
  out.push(
    `whole sources held out, never random rows). ${r.dataset.malicious} DGA names, ${r.dataset.benign} benign names.`,
  );
  out.push('');
  out.push('## Headline');
  out.push('');
  out.push(
    table(
      ['figure', 'value'],
      [
        s.thresholdGiven
          ? ['threshold (given, not chosen for an FPR budget)', s.threshold.toFixed(4)]
          : [
              'threshold (FPR on held-out real benign names within budget)',
              `${s.threshold.toFixed(4)} (budget ${pct(s.fprBudget, 1)})`,
            ],
        ['mean recall over families never seen', pct(s.meanRecall.all)],
        ['… character-based families', pct(s.meanRecall.character)],
        ['… dictionary families', pct(s.meanRecall.dictionary)],
        ['FPR on held-out real benign names', pct(s.pooled.realFpr, 3)],
        ['FPR on all held-out benign names (real and pattern sources)', pct(s.pooled.fpr, 3)],
        ['precision per name at 1 % malicious base rate', pct(s.precision.base1)],
        ['precision per name at 0.1 % malicious base rate', pct(s.precision.base01)],
        ['ROC AUC (held-out real benign vs held-out families)', s.roc.auc.toFixed(5)],
        ...(r.speed
          ? [
              [
                'scoring speed, one core (features + trees)',
                `${Math.round(r.speed.namesPerSecond).toLocaleString('en')} names/s`,
              ],
            ]
          : []),
      ],
    ),
  );
  out.push('');
  out.push('![ROC](img/dga-roc.svg)');
  out.push('');
  out.push('## Recall per family (left out of training)');
  out.push('');
  out.push(
    '"behind www." is the same names with a `www.` host label in front. ![per-family recall](img/dga-family-recall.svg)',
  );
  out.push('');
  out.push(
    table(
      [
        'family',
        'kind',
        'structure',
        'names',
        'recall',
        'behind www.',
        'at 0.5',
        ...(r.forest ? ['random forest'] : []),
      ],
      s.families.map((f) => [
        f.family,
        f.kind,
        f.structure,
        String(f.names),
        pct(f.recall, 1),
        pct(f.recallBehindWww, 1),
        pct(f.recallAtHalf, 1),
        ...(r.forest ? [pct(r.forest.families.find((x) => x.family === f.family)?.recall ?? 0, 1)] : []),
      ]),
    ),
  );
  out.push('');
  out.push('## False positives per benign source (source left out of training)');
  out.push('');
  out.push(
    table(
      [
        'source',
        'origin',
        'names',
        'FPR',
        'FPR at 0.5',
        ...(r.forest ? ['random forest'] : []),
        'highest-scoring names',
      ],
      s.sources.map((src) => [
        src.source,
        src.origin,
        String(src.names),
        pct(src.fpr, 3),
        pct(src.fprAtHalf, 3),
        ...(r.forest ? [pct(r.forest.sources.find((x) => x.source === src.source)?.fpr ?? 0, 3)] : []),
        src.examples.map((e) => `\`${e}\``).join(' '),
      ]),
    ),
  );
  out.push('');
  out.push(
    table(
      ['source', 'what it is'],
      [...r.sourceDescriptions].map(([k, v]) => [k, v]),
    ),
  );
  out.push('');
  if (r.forest) {
    const f = r.forest;
    out.push('## Side by side: scikit-learn random forest on the same features and folds');
    out.push('');
    out.push(
      table(
        ['model', 'threshold', 'mean family recall', 'character', 'dictionary', 'real benign FPR', 'AUC'],
        (
          [
            ['gradient-boosted trees (shipped)', s],
            ['random forest (`bench/dga-rf`)', f],
          ] as const
        ).map(([name, m]) => [
          name,
          m.threshold.toFixed(4),
          pct(m.meanRecall.all),
          pct(m.meanRecall.character),
          pct(m.meanRecall.dictionary),
          pct(m.pooled.realFpr, 3),
          m.roc.auc.toFixed(5),
        ]),
      ),
    );
    out.push('');
  }
  if (r.hostLevel) {
    const h = r.hostLevel.result;
    out.push('## Host level');
    out.push('');
    out.push(
      `Generated traffic (${h.lines.toLocaleString('en')} lines): each infected host runs one family that its fold's model never`,
    );
    const hl = r.hostLevel;
    const weakText = hl.weak
      ? `, or ${hl.weak.minWarnings} distinct names scoring at least ${hl.weak.threshold} (weak_warnings)`
      : '';
    const spreadText = hl.spread
      ? `, or ${hl.spread.minWarnings} distinct failed names under one domain scoring at least ${hl.spread.threshold} (spread_warnings)`
      : '';
    out.push(
      `saw; benign hosts look up names of the benign sources that fold held out, ${pct(hl.nxdomainShare, 0)} of them answered`,
    );
    out.push(
      `NXDOMAIN (search-suffix lookups, internal names, typos), and send a browser's intranet-redirect probes`,
    );
    out.push(
      `(three random 7-15 letter single labels, bare and under the search suffix) ${hl.browserProbes} time(s) an hour.`,
    );
    if (hl.usersPerHost > 1)
      out.push(
        `Each host address stands for ${hl.usersPerHost} users (NAT, a proxy): ${hl.usersPerHost} times the lookups and probes of one, over that many times fewer addresses.`,
      );
    out.push(
      `Prefilter: NXDOMAIN only; an alert needs ${hl.minWarnings} distinct warning names within ${hl.windowSeconds} s of event time${weakText}${spreadText}.`,
    );
    out.push('');
    out.push(
      table(
        ['figure', 'value'],
        [
          [
            'infected hosts found',
            `${h.infectedFound} of ${h.infected}${h.missed.length ? ` (missed: ${h.missed.join(', ')})` : ''}`,
          ],
          [
            'benign hosts accused',
            `${h.benignAccused} of ${h.benignHosts} over ${h.hostHours.toLocaleString('en')} host-hours`,
          ],
          [
            'benign hosts accused per 10,000 host-hours',
            ((10_000 * h.benignAccused) / Math.max(1, h.hostHours)).toFixed(2),
          ],
          ['names behind the accusations', h.accusedNames.map((n) => `\`${n}\``).join(' ') || '—'],
          ...(h.both
            ? [
                [
                  'with the Domainator beside it (as shipped): infected hosts found',
                  `${h.both.infectedFound} of ${h.infected}${h.both.missed.length ? ` (missed: ${h.both.missed.join(', ')})` : ''}`,
                ],
                [
                  'with the Domainator: benign hosts accused per 10,000 host-hours',
                  `${((10_000 * h.both.benignAccused) / Math.max(1, h.hostHours)).toFixed(2)} (${h.both.benignAccused} hosts)`,
                ],
                [
                  "names behind the Domainator's accusations",
                  [...new Set(h.both.domainatorAccusedNames)]
                    .slice(0, 8)
                    .map((n) => `\`${n}\``)
                    .join(' ') || '—',
                ],
              ]
            : []),
        ],
      ),
    );
    out.push('');
  }
  for (const section of r.extraSections ?? []) out.push(section, '');
  return `${out.join('\n').trimEnd()}\n`;
}
