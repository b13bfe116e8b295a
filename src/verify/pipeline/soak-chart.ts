/** Line charts for the soak report, as SVG: a handful of pictures need no plotting dependency. */

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
const COLOURS = [
  '#1f77b4',
  '#ff7f0e',
  '#2ca02c',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
  '#17becf',
];

export interface Series {
  readonly label: string;
  /** x: ms since the soak began. */
  readonly points: readonly { readonly x: number; readonly y: number }[];
}

/** A round axis maximum at or above `v` (1, 2 or 5 times a power of ten). */
export function niceMax(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  return ([1, 2, 5, 10].find((m) => m * p >= v) ?? 10) * p;
}

/**
 * Series over minutes since the soak began, with each fault as a thin red line at its time (its
 * kind in the tooltip), the legend on the right. `dots` draws points instead of lines (latencies).
 */
export function timeSeriesSvg(o: {
  readonly title: string;
  readonly yLabel: string;
  readonly series: readonly Series[];
  readonly faults: readonly { readonly atMs: number; readonly label: string }[];
  readonly dots?: boolean;
}): string {
  const [w, h, left, right, top, bottom] = [900, 360, 64, 700, 30, 310];
  const xs = o.series.flatMap((s) => s.points.map((p) => p.x));
  const xMax = Math.max(60_000, ...xs);
  const yMax = niceMax(Math.max(0, ...o.series.flatMap((s) => s.points.map((p) => p.y))));
  const x = (ms: number) => left + (ms / xMax) * (right - left);
  const y = (v: number) => bottom - (v / yMax) * (bottom - top);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" font-family="sans-serif" font-size="11">`,
    `<rect width="${w}" height="${h}" fill="white"/>`,
    `<text x="${left}" y="18" font-size="13">${esc(o.title)}</text>`,
  ];
  for (let i = 0; i <= 4; i += 1) {
    const v = (yMax * i) / 4;
    parts.push(`<line x1="${left}" y1="${y(v)}" x2="${right}" y2="${y(v)}" stroke="#eee"/>`);
    parts.push(`<text x="${left - 6}" y="${y(v) + 4}" text-anchor="end">${+v.toPrecision(3)}</text>`);
  }
  const minutes = xMax / 60_000;
  const step = niceMax(minutes / 8);
  for (let m = 0; m <= minutes; m += step) {
    parts.push(
      `<text x="${x(m * 60_000)}" y="${bottom + 16}" text-anchor="middle">${+m.toPrecision(3)}</text>`,
    );
  }
  parts.push(`<text x="${(left + right) / 2}" y="${h - 8}" text-anchor="middle">minutes</text>`);
  parts.push(
    `<text x="14" y="${(top + bottom) / 2}" transform="rotate(-90 14 ${(top + bottom) / 2})" text-anchor="middle">${esc(o.yLabel)}</text>`,
  );
  for (const f of o.faults)
    parts.push(
      `<line x1="${x(f.atMs)}" y1="${top}" x2="${x(f.atMs)}" y2="${bottom}" stroke="#d62728" stroke-opacity="0.35"><title>${esc(f.label)}</title></line>`,
    );
  o.series.forEach((s, i) => {
    const colour = COLOURS[i % COLOURS.length] ?? '#000';
    if (o.dots)
      for (const p of s.points)
        parts.push(`<circle cx="${x(p.x).toFixed(1)}" cy="${y(p.y).toFixed(1)}" r="2.5" fill="${colour}"/>`);
    else {
      const d = s.points
        .map((p, k) => `${k === 0 ? 'M' : 'L'}${x(p.x).toFixed(1)},${y(p.y).toFixed(1)}`)
        .join('');
      parts.push(`<path d="${d}" fill="none" stroke="${colour}" stroke-width="1.5"/>`);
    }
    parts.push(`<rect x="${right + 14}" y="${top + 14 * i}" width="10" height="10" fill="${colour}"/>`);
    parts.push(`<text x="${right + 28}" y="${top + 9 + 14 * i}">${esc(s.label)}</text>`);
  });
  parts.push(`<line x1="${left}" y1="${bottom}" x2="${right}" y2="${bottom}" stroke="#333"/>`);
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
