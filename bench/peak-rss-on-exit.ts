/**
 * Loaded with `node --import` by the end-to-end snapshot benchmark (bench/snapshot-e2e.ts) into
 * each timed child: on exit, writes the process's own peak RSS (MB; bench/peak-rss.ts) to the file
 * named by `BENCH_RSS_FILE`, so the parent learns it without the child's code knowing.
 */
import { writeFileSync } from 'node:fs';
import { ownPeakRssMb } from './peak-rss.js';

const target = process.env.BENCH_RSS_FILE;
if (target) process.on('exit', () => writeFileSync(target, String(ownPeakRssMb())));
