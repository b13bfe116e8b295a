import { createRequire } from 'node:module';
import { realListSource } from './source.ts';

const require = createRequire(import.meta.url);

/**
 * The registered domains of mail providers that the `email-providers` package ships (2.26.0, ISC):
 * gmail.com, yandex.ru, 163.com, web.de, ... The list the detector was first trained on.
 */
export const emailProviders = realListSource(
  'email-providers',
  'Registered domains of about 8,700 mail providers (gmail.com, 163.com, web.de, ...): all.json of ' +
    'email-providers@2.26.0 (ISC)',
  () => require('email-providers/all.json') as string[],
);
