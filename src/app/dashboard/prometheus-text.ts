/** One sample of a Prometheus text exposition. */
export interface PromSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/**
 * Parses the Prometheus text exposition format (version 0.0.4), as prom-client and every exporter
 * write it: comments and blank lines are skipped, label values may hold escaped quotes, backslashes
 * and newlines, values may be NaN or ±Inf, an optional timestamp follows the value. A line that
 * does not parse is skipped rather than failing the scrape: one odd series must not blank the page.
 */
export function parsePrometheusText(text: string): PromSample[] {
  const out: PromSample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const sample = parseSampleLine(line);
    if (sample) out.push(sample);
  }
  return out;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;

function parseSampleLine(line: string): PromSample | undefined {
  const nameMatch = NAME.exec(line);
  if (!nameMatch) return undefined;
  const name = nameMatch[0];
  let rest = line.slice(name.length);
  const labels: Record<string, string> = {};
  if (rest.startsWith('{')) {
    rest = rest.slice(1);
    for (;;) {
      rest = rest.trimStart();
      if (rest.startsWith('}')) {
        rest = rest.slice(1);
        break;
      }
      const labelMatch = LABEL_NAME.exec(rest);
      if (!labelMatch) return undefined;
      rest = rest.slice(labelMatch[0].length).trimStart();
      if (!rest.startsWith('="')) return undefined;
      const value = readQuoted(rest.slice(2));
      if (!value) return undefined;
      labels[labelMatch[0]] = value.text;
      rest = value.rest.trimStart();
      if (rest.startsWith(',')) rest = rest.slice(1);
    }
  }
  const [valueText] = rest.trim().split(/\s+/);
  if (valueText === undefined || valueText === '') return undefined;
  const value = parseValue(valueText);
  return value === undefined ? undefined : { name, labels, value };
}

function readQuoted(s: string): { text: string; rest: string } | undefined {
  let text = '';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch === '"') return { text, rest: s.slice(i + 1) };
    if (ch === '\\') {
      const next = s[++i];
      text += next === 'n' ? '\n' : (next ?? '');
    } else text += ch;
  }
  return undefined;
}

function parseValue(text: string): number | undefined {
  if (text === 'NaN') return Number.NaN;
  if (text === '+Inf' || text === 'Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  const n = Number(text);
  return Number.isNaN(n) ? undefined : n;
}
