/**
 * Request targets (path and query) as the server reads them, kept by URL: clients poll the
 * same few URLs, so splitting, decoding and route matching are done once per URL, and the
 * request log keeps one copy of the URL rather than one per request. The cache is bounded
 * (emptied when full) and keeps short URLs only; what it keeps is frozen, since every request
 * with that URL shares it.
 */
import { splitUrl } from './http-util';
import type { Route, Routes } from './routes';

export interface Target {
  /** The URL (path and query string) as received; a kept target holds the first request's copy. */
  readonly url: string;
  /** Decoded path segments. */
  readonly segments: readonly string[];
  /** Raw query string, without the "?". */
  readonly query: string;
  /** The API route the segments match, with the site values; null if none. */
  readonly match: { readonly route: Route; readonly params: readonly string[] } | null;
}

/** URLs kept at most; beyond, the cache starts again empty. */
const MAX_TARGETS = 1000;
/** Longer URLs are parsed at every request and not kept. */
const MAX_URL_LENGTH = 512;

export class TargetCache {
  private readonly targets = new Map<string, Target>();

  constructor(private readonly routes: Routes) {}

  /** The target of a URL; an HttpError (400) for a malformed path segment, which is not kept. */
  get(url: string): Target {
    const kept = this.targets.get(url);
    if (kept !== undefined) return kept;
    const { segments, query } = splitUrl(url);
    const match = this.routes.match(segments);
    const target: Target = Object.freeze({
      url,
      segments: Object.freeze(segments),
      query,
      match: match && Object.freeze({ route: match.route, params: Object.freeze(match.params) }),
    });
    if (url.length <= MAX_URL_LENGTH) {
      if (this.targets.size >= MAX_TARGETS) this.targets.clear();
      this.targets.set(url, target);
    }
    return target;
  }
}
