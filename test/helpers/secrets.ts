/**
 * The credentials the redaction tests hand out (each with characters that make every encoding
 * differ from the raw text), and the search for any form of them in a text.
 */
import { formsOf } from './hostile-server';

// Characters that make every encoding differ from the raw text: space, / + = & ~ ! * ( ).
export const API_KEY = 'K3y/SECRET+ab c=12&x~';
export const BEARER = 'Be4rer/T0ken+xyz==';
export const CLIENT_SECRET = 'Cl1ent SECRET/98+7~!*()';
export const WRONG_SECRET = `wrong-${CLIENT_SECRET}`;
export const TOKEN = 'tok/EN+4ccess_t0ken==';
const SECRETS = [API_KEY, BEARER, CLIENT_SECRET, WRONG_SECRET, TOKEN];

/** Every form of every secret found in `text`, and every secret found in a base64 run of it once decoded. */
export function leaks(text: string): string[] {
  const found = SECRETS.flatMap((s) =>
    formsOf(s)
      .filter((f) => text.includes(f))
      .map((f) => `${JSON.stringify(s)} as ${JSON.stringify(f)}`),
  );
  for (const run of text.match(/[A-Za-z0-9+/_-]{12,}={0,2}/g) ?? []) {
    for (const shift of [0, 1, 2, 3]) {
      const decoded = Buffer.from(run.slice(shift).replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('latin1');
      for (const s of SECRETS)
        if (decoded.includes(s)) found.push(`${JSON.stringify(s)} in base64 run ${run.slice(0, 40)}…`);
    }
  }
  return found;
}
