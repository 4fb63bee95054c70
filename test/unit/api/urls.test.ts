import { describe, expect, it } from 'vitest';
import { ClientConfigError, ForeignOriginError } from '../../../src/api/errors.js';
import { buildQuery, parseBaseUrl, resolveServiceUrl, serviceUrl } from '../../../src/api/urls.js';

describe('parseBaseUrl', () => {
  it.each([
    ['http://127.0.0.1:8080/api/v1/igaming', 'http://127.0.0.1:8080', '/api/v1/igaming'],
    ['https://svc.example/api/v1/igaming/', 'https://svc.example', '/api/v1/igaming'],
    ['https://svc.example/prefix/api/v1/igaming', 'https://svc.example', '/prefix/api/v1/igaming'],
  ])('accepts %s', (input, origin, basePath) => {
    const base = parseBaseUrl(input);
    expect(base.origin).toBe(origin);
    expect(base.basePath).toBe(basePath);
  });

  it.each([
    ['not a url'],
    ['ftp://svc.example/api/v1/igaming'],
    ['https://svc.example/api/v2/igaming'],
    ['https://svc.example/'],
    ['https://user:pw@svc.example/api/v1/igaming'],
    ['https://svc.example/api/v1/igaming?x=1'],
  ])('refuses %s', (input) => {
    expect(() => parseBaseUrl(input)).toThrow(ClientConfigError);
  });
});

describe('resolveServiceUrl (only the base origin is followed)', () => {
  const base = parseBaseUrl('http://127.0.0.1:4000/api/v1/igaming');

  it.each([
    ['/api/v1/igaming/enrichment_runs/7', '/api/v1/igaming/enrichment_runs/7', '/enrichment_runs/7'],
    [
      'http://127.0.0.1:4000/api/v1/igaming/exports/3/download',
      '/api/v1/igaming/exports/3/download',
      '/exports/3/download',
    ],
    ['exports/3', '/api/v1/igaming/exports/3', '/exports/3'],
    ['/api/v1/igaming/exports/3?token=1', '/api/v1/igaming/exports/3?token=1', '/exports/3'],
  ])('follows %s', (input, pathAndQuery, endpointPath) => {
    const url = resolveServiceUrl(base, input);
    expect(url.pathAndQuery).toBe(pathAndQuery);
    expect(url.endpointPath).toBe(endpointPath);
  });

  it.each([
    ['http://127.0.0.1:4001/api/v1/igaming/exports/3/download'],
    ['https://127.0.0.1:4000/api/v1/igaming/exports/3'],
    ['http://localhost:4000/api/v1/igaming/exports/3'],
    ['http://evil.example/api/v1/igaming/exports/3'],
    ['//evil.example/api/v1/igaming/exports/3'],
    ['http://user:pw@127.0.0.1:4000/api/v1/igaming/exports/3'],
    ['javascript:alert(1)'],
  ])('refuses %s with ERR_FOREIGN_ORIGIN', (input) => {
    try {
      resolveServiceUrl(base, input);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ForeignOriginError);
      expect((error as ForeignOriginError).code).toBe('ERR_FOREIGN_ORIGIN');
    }
  });

  it('builds service URLs and queries', () => {
    expect(serviceUrl(base, '/domains', '?page=2').pathAndQuery).toBe('/api/v1/igaming/domains?page=2');
    expect(
      buildQuery([
        ['include[]', ['licenses', 'geo']],
        ['x', undefined],
        ['b', true],
      ]),
    ).toBe('?include%5B%5D=licenses&include%5B%5D=geo&b=true');
  });
});
