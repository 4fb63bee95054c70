import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { CheckpointerWorkerData } from './checkpointer.js';

/*
 * The worker thread of src/mirror/checkpointer.ts: its own connection to the mirror file, a
 * PASSIVE WAL checkpoint every `intervalMs`, and one last checkpoint when told to stop.
 */

const data = workerData as CheckpointerWorkerData;
const port = parentPort!;
const db = new Database(data.path, { fileMustExist: true });
db.pragma('busy_timeout = 0');
db.pragma('synchronous = NORMAL');

function checkpoint(): void {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy: the next tick tries again.
  }
}

let timer = setTimeout(function tick() {
  checkpoint();
  timer = setTimeout(tick, data.intervalMs);
}, data.intervalMs);

port.on('message', () => {
  clearTimeout(timer);
  checkpoint();
  db.close();
  port.close();
});
