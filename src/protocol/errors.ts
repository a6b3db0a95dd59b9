/**
 * The base of every error this package raises, and the one the protocol itself raises:
 * ValidationError, for input refused before anything is sent. The client adds one subclass
 * of ApiError per kind of failure (client/errors.ts). Callers branch on the class; a Catch
 * node sees `msg.error.message` and the error's `code` (a stable string such as
 * `EMS_VALIDATION`, `HTTP_429`, `ETIMEDOUT`).
 */
export abstract class EmsError extends Error {
  /** A stable code: EMS_VALIDATION, HTTP_<status>, ECONNREFUSED, ETIMEDOUT, EMS_ABORTED, … */
  abstract readonly code: string;
  /** The input field the error is about, when known. */
  readonly field?: string;
}

/** Input that was refused before anything was sent. Names the field and the accepted forms. */
export class ValidationError extends EmsError {
  declare readonly field: string;
  readonly code = 'EMS_VALIDATION';
  /** `malformed`: wrong type or form (HTTP 400); `unprocessable`: well-formed but not allowed (HTTP 422). */
  readonly kind: 'malformed' | 'unprocessable';
  constructor(field: string, message: string, kind: 'malformed' | 'unprocessable' = 'malformed') {
    super(`${field} ${message}`);
    this.name = 'ValidationError';
    (this as { field: string }).field = field;
    this.kind = kind;
  }
}

/**
 * The refusal of an array longer than its cap (protocol/limits.ts, INPUTS), made from its
 * length alone, before any element is read: "prices must have at most 960 slots; got 1000000".
 */
export function tooLong(field: string, max: number, got: number, what: string, more = ''): ValidationError {
  return new ValidationError(field, `must have at most ${max} ${what}; got ${got}${more}`, 'unprocessable');
}
