import Kafka from '@confluentinc/kafka-javascript';

/** librdkafka's error codes by name (`ERR__TRANSPORT`, `ERR_UNKNOWN_MEMBER_ID`, ...). */
export const CODES: Readonly<Record<string, number>> = Kafka.CODES.ERRORS;

const NAMES = new Map<number, string>(Object.entries(CODES).map(([name, code]) => [code, name]));

/** `ERR__MAX_POLL_EXCEEDED` -> `_MAX_POLL_EXCEEDED`, `ERR_UNKNOWN_MEMBER_ID` -> `UNKNOWN_MEMBER_ID`. */
export function codeName(code: number): string {
  const name = NAMES.get(code);
  return name === undefined ? `CODE_${code}` : name.replace(/^ERR_/, '');
}

export function code(name: string): number {
  const value = CODES[`ERR_${name}`];
  if (value === undefined) throw new Error(`unknown librdkafka error name ${name}`);
  return value;
}
