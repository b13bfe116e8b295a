/**
 * RFC 5424 messages and RFC 6587 octet-counting frames. The body is JSON with every character beyond
 * ASCII escaped, so MSG is plain ASCII: RFC 5424 would require a byte-order mark before UTF-8 text,
 * which many receivers keep in the message and which breaks JSON parsers behind them.
 */

export interface SyslogHeader {
  /** 0..23 */
  readonly facility: number;
  /** 0..7 */
  readonly severity: number;
  readonly hostname: string;
  readonly appName: string;
  readonly procId: string;
  readonly msgId: string;
}

const NIL = '-';
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?(Z|[+-]\d\d:\d\d)$/;

/** `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID [SD-ID name="value"...] MSG`. */
export function syslogMessage(
  header: SyslogHeader,
  timestamp: string,
  sdId: string,
  params: readonly (readonly [string, string])[],
  body: string,
): string {
  const pri = header.facility * 8 + header.severity;
  const sd = `[${sdId}${params.map(([name, value]) => ` ${name}="${escapeParamValue(value)}"`).join('')}]`;
  return [
    `<${pri}>1`,
    RFC3339.test(timestamp) ? timestamp : NIL,
    headerField(header.hostname, 255),
    headerField(header.appName, 48),
    headerField(header.procId, 128),
    headerField(header.msgId, 32),
    sd,
    body,
  ].join(' ');
}

/** RFC 6587 octet counting: `<length in bytes> <message>`. */
export function octetCounted(message: string): Buffer {
  const bytes = Buffer.from(message, 'utf8');
  return Buffer.concat([Buffer.from(`${bytes.length} `), bytes]);
}

/** PARAM-VALUE escaping: `"`, `\` and `]` get a backslash. */
export function escapeParamValue(value: string): string {
  return value.replace(/["\\\]]/g, '\\$&');
}

/** JSON with every non-ASCII character (and DEL) written as a `\uXXXX` escape. */
export function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

// Header fields are printable ASCII without spaces; anything else becomes "_", an empty one NIL.
function headerField(value: string, max: number): string {
  const clean = value.replace(/[^\x21-\x7e]/g, '_').slice(0, max);
  return clean === '' ? NIL : clean;
}
