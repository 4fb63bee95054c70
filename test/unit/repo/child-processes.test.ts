import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Every child process the product, its tests, benchmarks and scripts start must run on the Node
 * that started them (`process.execPath`), never on whatever `node` is first on PATH: a machine's
 * system Node may be one the product does not support, and a test run on Node 26 that quietly
 * spawned Node 20 children would prove nothing about Node 26. This reads every TypeScript file and
 * checks each call into `node:child_process`.
 *
 * It also checks that every child a test starts has its output recorded for the suite-wide key
 * scan (test/resilience/security/child-output.ts): nothing records children behind the tests' back.
 */

const ROOT = resolve(import.meta.dirname, '../../..');
const FOLDERS = ['src', 'pipelines', 'test', 'bench', 'scripts'];
/** Calls whose first argument is the program to run. */
const PROGRAM_FIRST = new Set(['spawn', 'spawnSync', 'execFile', 'execFileSync']);
/** Calls that run a shell command line: the shell picks `node` from PATH. */
const SHELL = new Set(['exec', 'execSync']);

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

interface Finding {
  file: string;
  line: number;
  call: string;
  problem: string;
}

/** The names a file imports from `node:child_process` (or `child_process`), local → imported. */
function childProcessImports(source: ts.SourceFile): { names: Map<string, string>; namespaces: Set<string> } {
  const names = new Map<string, string>();
  const namespaces = new Set<string>();
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    if (!['node:child_process', 'child_process'].includes(statement.moduleSpecifier.text)) continue;
    const bindings = statement.importClause?.namedBindings;
    if (statement.importClause?.name) namespaces.add(statement.importClause.name.text);
    if (bindings && ts.isNamespaceImport(bindings)) namespaces.add(bindings.name.text);
    if (bindings && ts.isNamedImports(bindings)) {
      for (const element of bindings.elements) {
        names.set(element.name.text, (element.propertyName ?? element.name).text);
      }
    }
  }
  return { names, namespaces };
}

/**
 * A call is exempt when a `// child-process-check: <reason>` comment sits in the comment block
 * right above it: for the tests that must run the binary through its shebang, or run a node
 * older than the supported lines (test/integration/package/package.test.ts).
 */
function exempted(text: string, line: number): boolean {
  const lines = text.split('\n');
  for (let i = line - 2; i >= 0 && lines[i]!.trim().startsWith('//'); i--) {
    if (/child-process-check: \S/.test(lines[i]!)) return true;
  }
  return false;
}

/** Every call into `node:child_process` in a file, with the function called and its line. */
function childProcessCallsIn(
  source: ts.SourceFile,
): Array<{ node: ts.CallExpression; called: string; line: number }> {
  const { names, namespaces } = childProcessImports(source);
  const calls: Array<{ node: ts.CallExpression; called: string; line: number }> = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      let called: string | undefined;
      const callee = node.expression;
      if (ts.isIdentifier(callee)) called = names.get(callee.text);
      else if (
        ts.isPropertyAccessExpression(callee) &&
        ts.isIdentifier(callee.expression) &&
        namespaces.has(callee.expression.text)
      )
        called = callee.name.text;
      const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      if (called !== undefined) calls.push({ node, called, line });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return calls;
}

export function findChildProcessCalls(file: string, text: string): Finding[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const findings: Finding[] = [];
  for (const { node, called, line } of childProcessCallsIn(source)) {
    if (exempted(text, line)) continue;
    const first = node.arguments[0]?.getText(source);
    if (SHELL.has(called)) {
      findings.push({ file, line, call: called, problem: 'runs a shell command line' });
    } else if (PROGRAM_FIRST.has(called) && first !== 'process.execPath') {
      findings.push({ file, line, call: called, problem: `runs ${first ?? 'nothing'}` });
    } else if (called === 'fork' && /execPath\s*:/.test(node.getText(source))) {
      findings.push({ file, line, call: called, problem: 'overrides execPath' });
    }
  }
  return findings;
}

/** The functions that hand a child's output to the key scan (test/resilience/security/child-output.ts). */
const RECORDERS = new Set(['recordChildOutput', 'recordFinishedChild']);

/**
 * Children started in a test file whose output does not reach the suite-wide key scan: each call
 * into `node:child_process` must be assigned to a variable that the same file passes to
 * `recordChildOutput` (after `spawn`) or `recordFinishedChild` (after `spawnSync`).
 */
export function findUnrecordedChildren(file: string, text: string): Finding[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const recorded = new Set<string>();
  const collect = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      ts.isIdentifier(node.expression) &&
      RECORDERS.has(node.expression.text)
    ) {
      const names = (n: ts.Node): void => {
        if (ts.isIdentifier(n)) recorded.add(n.text);
        ts.forEachChild(n, names);
      };
      node.arguments.forEach(names);
    }
    ts.forEachChild(node, collect);
  };
  collect(source);
  const findings: Finding[] = [];
  for (const { node, called, line } of childProcessCallsIn(source)) {
    let holder: ts.Node = node.parent;
    while (ts.isAwaitExpression(holder) || ts.isParenthesizedExpression(holder)) holder = holder.parent;
    const name = ts.isVariableDeclaration(holder) && ts.isIdentifier(holder.name) ? holder.name.text : null;
    if (name === null)
      findings.push({ file, line, call: called, problem: 'the child is not kept in a variable' });
    else if (!recorded.has(name))
      findings.push({ file, line, call: called, problem: `${name} is not passed to a recorder` });
  }
  return findings;
}

describe('child processes run on the Node that started them', () => {
  it('flags calls that would take node from PATH (so the scan below can fail)', () => {
    const text = [
      "import { spawn, execSync as run } from 'node:child_process';",
      "import * as cp from 'node:child_process';",
      "spawn('node', ['x.js']);",
      "run('npx tsc');",
      "cp.spawnSync('npm', ['test']);",
      'spawn(process.execPath, ["ok.js"]);',
      '// child-process-check: runs the binary through its shebang',
      "spawn('bin/cli.js', []);",
    ].join('\n');
    expect(findChildProcessCalls('probe.ts', text).map((f) => `${f.line} ${f.call}`)).toEqual([
      '3 spawn',
      '4 execSync',
      '5 spawnSync',
    ]);
  });

  it('flags children of a test whose output is not recorded for the key scan (so the scan below can fail)', () => {
    const text = [
      "import { spawn, spawnSync } from 'node:child_process';",
      'const kept = spawn(process.execPath, []);',
      'recordChildOutput(kept, { args: [] });',
      'const forgotten = spawn(process.execPath, []);',
      'spawn(process.execPath, []);',
      'const done = spawnSync(process.execPath, []);',
      'recordFinishedChild({ args: [] }, done);',
    ].join('\n');
    expect(findUnrecordedChildren('probe.ts', text).map((f) => `${f.line} ${f.problem}`)).toEqual([
      '4 forgotten is not passed to a recorder',
      '5 the child is not kept in a variable',
    ]);
  });

  it('every child a test starts has its output recorded for the key scan', () => {
    const files = tsFiles(join(ROOT, 'test'));
    const findings = files.flatMap((file) =>
      findUnrecordedChildren(relative(ROOT, file), readFileSync(file, 'utf8')),
    );
    expect(findings).toEqual([]);
  });

  it('finds none in src, pipelines, test, bench or scripts', () => {
    const files = FOLDERS.flatMap((folder) => tsFiles(join(ROOT, folder)));
    expect(files.length).toBeGreaterThan(100);
    const findings = files.flatMap((file) =>
      findChildProcessCalls(relative(ROOT, file), readFileSync(file, 'utf8')),
    );
    expect(findings).toEqual([]);
  });
});
