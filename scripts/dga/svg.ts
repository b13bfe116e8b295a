/** Two small SVG charts for the evaluation report: no plotting dependency for two pictures. */

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** ROC curves on a log-scaled false-positive axis (1e-4 .. 1), where the operating point lives. */
export function rocSvg(
  curves: readonly { label: string; points: readonly { fpr: number; tpr: number }[] }[],
  marker?: { fpr: number; tpr: number; label: string },
): string {
  const w = 560;
  const h = 380;
  const left = 60;
  const bottom = 330;
  const top = 20;
  const right = 540;
  const x = (fpr: number) => left + ((Math.log10(Math.max(fpr, 1e-4)) + 4) / 4) * (right - left);
  const y = (tpr: number) => bottom - tpr * (bottom - top);
  const colours = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd'];
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" font-family="sans-serif" font-size="12">`,
    `<rect width="${w}" height="${h}" fill="white"/>`,
  ];
  for (const e of [-4, -3, -2, -1, 0]) {
    const gx = x(10 ** e);
    parts.push(`<line x1="${gx}" y1="${top}" x2="${gx}" y2="${bottom}" stroke="#ddd"/>`);
    parts.push(
      `<text x="${gx}" y="${bottom + 16}" text-anchor="middle">${10 ** e >= 0.01 ? 10 ** e : `1e${e}`}</text>`,
    );
  }
  for (const t of [0, 0.25, 0.5, 0.75, 1]) {
    parts.push(`<line x1="${left}" y1="${y(t)}" x2="${right}" y2="${y(t)}" stroke="#ddd"/>`);
    parts.push(`<text x="${left - 6}" y="${y(t) + 4}" text-anchor="end">${t}</text>`);
  }
  parts.push(
    `<text x="${(left + right) / 2}" y="${h - 12}" text-anchor="middle">false-positive rate (log)</text>`,
  );
  parts.push(
    `<text x="14" y="${(top + bottom) / 2}" transform="rotate(-90 14 ${(top + bottom) / 2})" text-anchor="middle">recall</text>`,
  );
  curves.forEach((c, i) => {
    const d = c.points
      .map((p, k) => `${k === 0 ? 'M' : 'L'}${x(p.fpr).toFixed(1)},${y(p.tpr).toFixed(1)}`)
      .join('');
    const colour = colours[i % colours.length] ?? '#000';
    parts.push(`<path d="${d}" fill="none" stroke="${colour}" stroke-width="2"/>`);
    parts.push(
      `<text x="${right - 200}" y="${bottom - 20 - 16 * i}" fill="${colour}">${esc(c.label)}</text>`,
    );
  });
  if (marker) {
    parts.push(`<circle cx="${x(marker.fpr)}" cy="${y(marker.tpr)}" r="4" fill="black"/>`);
    parts.push(`<text x="${x(marker.fpr) + 8}" y="${y(marker.tpr) + 14}">${esc(marker.label)}</text>`);
  }
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

/** Horizontal bars, one per row, values in [0, 1], with a reference line. */
export function barsSvg(
  rows: readonly { label: string; value: number; note?: string }[],
  reference?: number,
): string {
  const rowH = 16;
  const left = 170;
  const width = 340;
  const h = rows.length * rowH + 40;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${left + width + 90}" height="${h}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
  ];
  rows.forEach((r, i) => {
    const yy = 10 + i * rowH;
    parts.push(`<text x="${left - 6}" y="${yy + 11}" text-anchor="end">${esc(r.label)}</text>`);
    const colour = reference !== undefined && r.value < reference ? '#d62728' : '#1f77b4';
    parts.push(
      `<rect x="${left}" y="${yy + 2}" width="${(r.value * width).toFixed(1)}" height="${rowH - 4}" fill="${colour}"/>`,
    );
    parts.push(
      `<text x="${left + r.value * width + 4}" y="${yy + 11}">${(100 * r.value).toFixed(1)}${esc(r.note ?? '')}</text>`,
    );
  });
  if (reference !== undefined) {
    const rx = left + reference * width;
    parts.push(`<line x1="${rx}" y1="6" x2="${rx}" y2="${h - 26}" stroke="black" stroke-dasharray="4 3"/>`);
  }
  parts.push(`<text x="${left}" y="${h - 8}">recall (%) when the family was left out of training</text>`);
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
