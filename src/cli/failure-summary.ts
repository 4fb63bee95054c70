/**
 * The `--json` summary of a command that failed without a result of its own: the one object on
 * stdout, its error's stable code and message. `command` is null when the failure came before a
 * command was known (an unsupported Node, say).
 */
export function failureSummary(
  command: string | null,
  exitCode: number,
  error: { code: string; message: string },
): { command: string | null; ok: false; exitCode: number; error: { code: string; message: string } } {
  return { command, ok: false, exitCode, error };
}
