import type { RunningSimulator } from '../../../src/simulator/index.js';

/** A parsed response: status, headers and JSON body (undefined when the body is not JSON). */
export interface Reply {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
}

/** Calls the simulator over real HTTP (global fetch), authenticated with X-API-Key unless told otherwise. */
export async function call(
  sim: RunningSimulator,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; auth?: boolean; base?: 'api' | 'origin' } = {},
): Promise<Reply> {
  const headers: Record<string, string> = {
    ...(options.auth === false ? {} : { 'X-API-Key': sim.apiKey }),
    ...options.headers,
  };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const url = (options.base === 'origin' ? sim.origin : sim.baseUrl) + path;
  const res = await fetch(url, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}
