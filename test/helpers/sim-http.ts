/**
 * One HTTP call to a simulator: `body` as JSON (or a raw string, to send malformed JSON),
 * extra headers; answers status, headers and the body parsed as JSON (or the text).
 */
export interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const init: RequestInit = { method, headers: { 'content-type': 'application/json', ...headers } };
  if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
  const res = await fetch(base + path, init);
  const text = await res.text();
  try {
    return { status: res.status, headers: res.headers, body: JSON.parse(text) };
  } catch {
    return { status: res.status, headers: res.headers, body: text };
  }
}
