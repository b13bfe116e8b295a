import type { Codec } from './contract.ts';

/** The default codec: values as UTF-8 JSON. */
export const jsonCodec: Codec<unknown> = {
  encode: (value) => Buffer.from(JSON.stringify(value)),
  decode: (bytes) => JSON.parse(bytes.toString('utf8')) as unknown,
};

/** Values that already are bytes; stored as given. */
export const bytesCodec: Codec<Buffer> = {
  encode: (value) => value,
  decode: (bytes) => bytes,
};
