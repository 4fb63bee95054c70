import type { Writable } from 'node:stream';
import cliProgress from 'cli-progress';
import { redact, redactText } from '../log/redact.js';
import type { Progress, ProgressTask } from '../runtime/progress.js';
import { noopProgress } from '../runtime/progress.js';

/** What a command writes to; stdout belongs to the result, logs and progress go to stderr. */
export interface CliIo {
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
}

/** Writes the command's result: one JSON object with `--json`, readable text otherwise. */
export class Output {
  readonly json: boolean;
  private readonly io: CliIo;
  private written = false;

  constructor(io: CliIo, json: boolean) {
    this.io = io;
    this.json = json;
  }

  /** Whether progress bars may be drawn (a terminal on stderr and no `--json`). */
  get interactive(): boolean {
    return !this.json && this.io.stderr.isTTY === true && this.io.env.CI !== 'true';
  }

  /**
   * Writes the final result once. With `--json` the summary object is the only thing on
   * stdout; otherwise `human` lines are printed. Everything passes through redact().
   */
  result(summary: Record<string, unknown>, human: string[] = []): void {
    if (this.written) return;
    this.written = true;
    if (this.json) {
      this.io.stdout.write(`${JSON.stringify(redact(summary), jsonReplacer)}\n`);
    } else if (human.length > 0) {
      this.io.stdout.write(`${redactText(human.join('\n'))}\n`);
    }
  }

  /** A message for people on stderr (never with `--json`, which keeps stderr for logs). */
  note(text: string): void {
    this.io.stderr.write(`${redactText(text)}\n`);
  }

  /** A progress reporter: bars on a terminal, nothing otherwise (logs carry progress there). */
  progress(): Progress {
    if (!this.interactive) return noopProgress;
    const multibar = new cliProgress.MultiBar(
      {
        stream: this.io.stderr as unknown as NodeJS.WritableStream,
        format: ' {label} |{bar}| {value}/{total} {unit} · {rate}/s · ETA {eta_formatted}',
        hideCursor: true,
        clearOnComplete: false,
        stopOnComplete: false,
        etaBuffer: 50,
      },
      cliProgress.Presets.shades_classic,
    );
    const started = new Map<ProgressTask, number>();
    return {
      task(label: string, total: number, unit = ''): ProgressTask {
        const bar = multibar.create(Math.max(total, 0), 0, { label: label.padEnd(10), unit, rate: '0' });
        const begin = Date.now();
        const task: ProgressTask = {
          setTotal: (n) => bar.setTotal(Math.max(n, 0)),
          increment: (n = 1) => {
            const done = (bar.getProgress() * bar.getTotal() || 0) + n;
            const seconds = (Date.now() - begin) / 1000;
            bar.increment(n, { rate: seconds > 0 ? (done / seconds).toFixed(1) : '0' });
          },
          done: () => bar.stop(),
        };
        started.set(task, begin);
        return task;
      },
      stop: () => multibar.stop(),
    };
  }
}

function jsonReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint'
    ? Number.isSafeInteger(Number(value))
      ? Number(value)
      : value.toString()
    : value;
}
