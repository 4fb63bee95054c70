import { describe, expect, it } from 'vitest';
import { filenameFromContentDisposition, sanitizeFilename } from '../../../src/api/filename.js';

describe('filenameFromContentDisposition', () => {
  it.each([
    ['attachment; filename="export-12.csv"', 'export-12.csv'],
    ['attachment; filename=export-12.csv', 'export-12.csv'],
    ['attachment; filename="a \\"quoted\\" name.csv"', 'a "quoted" name.csv'],
    ['attachment; filename="fallback.csv"; filename*=UTF-8\'\'na%C3%AFve%20file.csv', 'naïve file.csv'],
    ["attachment; filename*=utf-8'en'report.jsonl", 'report.jsonl'],
    ['attachment', undefined],
    [undefined, undefined],
  ])('%s → %s', (header, expected) => {
    expect(filenameFromContentDisposition(header)).toBe(expected);
  });
});

describe('sanitizeFilename', () => {
  it.each([
    ['export-12.csv', 'export-12.csv'],
    ['../../etc/passwd', 'passwd'],
    ['..\\..\\windows\\system.ini', 'system.ini'],
    ['/abs/path/file.csv', 'file.csv'],
    ['..', 'fallback.bin'],
    ['.hidden', 'hidden'],
    ['...', 'fallback.bin'],
    ['a..b.csv', 'a.b.csv'],
    ['naïve file.csv', 'naive_file.csv'],
    ['rm -rf $(x);.csv', 'rm_-rf___x__.csv'],
    ['name\u0000with\nnul.csv', 'name_with_nul.csv'],
    ['', 'fallback.bin'],
    [undefined, 'fallback.bin'],
  ])('%s → %s', (input, expected) => {
    const out = sanitizeFilename(input, 'fallback.bin');
    expect(out).toBe(expected);
    expect(out).not.toMatch(/[/\\]/);
    expect(out).not.toContain('..');
  });

  it('caps the length and keeps the extension', () => {
    const out = sanitizeFilename(`${'a'.repeat(500)}.csv`, 'f');
    expect(out.length).toBe(160);
    expect(out.endsWith('.csv')).toBe(true);
  });
});
