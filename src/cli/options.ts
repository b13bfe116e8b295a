import { UsageError } from './command.ts';

type Values = Record<string, string | boolean | undefined>;

/** A string option's value, or undefined when absent. */
export function stringOption(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/** An integer option within [min, max], or undefined when absent; anything else is a usage error. */
export function intOption(values: Values, name: string, min: number, max: number): number | undefined {
  const raw = stringOption(values, name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new UsageError(`--${name} must be an integer in ${min}..${max}, got '${raw}'`);
  }
  return value;
}

/** Like {@link intOption} but required. */
export function requiredIntOption(values: Values, name: string, min: number, max: number): number {
  const value = intOption(values, name, min, max);
  if (value === undefined) throw new UsageError(`--${name} is required`);
  return value;
}
