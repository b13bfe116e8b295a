/**
 * The long run of a proof (`npm run test:long`, which sets HAMSTRING_TEST_LONG=1). A proof with a
 * long variant runs a short one in the default suite (fewer records, one kill instead of several):
 * the same guarantee, checked the same way, on less work; the long run repeats it at full size.
 * scripts/run-integration-tests.ts lists the files that have a long variant.
 */
export const longRun = process.env.HAMSTRING_TEST_LONG === '1';

/** `short` in the default suite, `long` in `npm run test:long`. */
export function longOr<T>(short: T, long: T): T {
  return longRun ? long : short;
}
