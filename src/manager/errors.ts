// Every error the manager raises on purpose, and the one place they map to HTTP
// status codes. Services throw these; the API layer (api/server.ts) answers
// with statusOf(err); the CLI verbs print err.message. Anything else is a bug
// and answers 500.

/** Input that breaks a rule (a field, a URL, a filter pattern): nothing was changed. */
export class ValidationError extends Error {
  override readonly name = 'ValidationError';
}

/** No such channel, candidate or stored page. */
export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
}

/** The change collides with what is stored (a duplicate channel, a candidate accepted twice). */
export class ConflictError extends Error {
  override readonly name = 'ConflictError';
}

/** An upload part the storage side refuses; the crawler is told why (over the upload protocol, not HTTP). */
export class UploadRefused extends Error {
  override readonly name = 'UploadRefused';
}

/** The database is held by another process (a running `dht-manager serve`). */
export class StoreLockedError extends Error {
  override readonly name = 'StoreLockedError';
}

/** An operator API token that cannot be used (too short, unprintable). */
export class ApiTokenError extends Error {
  override readonly name = 'ApiTokenError';
}

/** A refusal the HTTP layer itself decides (guard, body limits, routing), with its status. */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const STATUS: [new (...args: never[]) => Error, number][] = [
  [ValidationError, 400],
  [URIError, 400], // a malformed %-escape in a path segment
  [NotFoundError, 404],
  [ConflictError, 409],
];

/** The HTTP status an error answers with: 500 for anything not raised on purpose. */
export function statusOf(err: unknown): number {
  if (err instanceof HttpError) return err.status;
  for (const [cls, status] of STATUS) if (err instanceof cls) return status;
  return 500;
}
