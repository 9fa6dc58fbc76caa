/**
 * How big the source files and their functions are, measured the same way every time:
 *
 * - a file's size is its lines of code: lines that are neither blank nor only a comment
 *   (`//`, `/**`, ` *`, `*\/` at the start of the line);
 * - a function's size is the lines of code inside its span, nested functions included (a closure
 *   of several hundred lines counts whole). Functions are declarations, expressions, arrow
 *   functions and methods, found by parsing each file with oxc-parser.
 *
 * `node scripts/code-size.ts` prints the largest files and functions of `packages/*\/src`;
 * `--check` exits 1 when a file is over 400 lines of code or a function over 150.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { parseSync } from "oxc-parser"

const root = join(import.meta.dirname, "..")
const maxFileLines = 400
const maxFunctionLines = 150

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : []
  })

const isCode = (line: string): boolean => !/^\s*(\*|\/\*\*|\*\/|\/\/|$)/.test(line)

interface Measured {
  readonly file: string
  readonly lines: number
  readonly functions: ReadonlyArray<{ readonly name: string; readonly line: number; readonly lines: number }>
}

const functionTypes = new Set(["FunctionDeclaration", "FunctionExpression", "ArrowFunctionExpression"])

const measure = (path: string): Measured => {
  const text = readFileSync(path, "utf8")
  const lines = text.split("\n")
  const code = lines.map(isCode)
  // The line of each character offset's start, for spans.
  const lineStarts: Array<number> = [0]
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) lineStarts.push(i + 1)
  const lineOf = (offset: number): number => {
    let low = 0
    let high = lineStarts.length - 1
    while (low < high) {
      const mid = (low + high + 1) >> 1
      if ((lineStarts[mid] as number) <= offset) low = mid
      else high = mid - 1
    }
    return low
  }
  const codeLines = (start: number, end: number): number => {
    let n = 0
    for (let line = lineOf(start); line <= lineOf(end); line++) if (code[line]) n++
    return n
  }
  const functions: Array<{ name: string; line: number; lines: number }> = []
  const visit = (node: unknown, name: string): void => {
    if (Array.isArray(node)) {
      for (const child of node) visit(child, name)
      return
    }
    if (typeof node !== "object" || node === null) return
    const record = node as Record<string, unknown> & { type?: string; start?: number; end?: number }
    let here = name
    if (record.type === "VariableDeclarator" || record.type === "PropertyDefinition" || record.type === "Property") {
      const id = (record.id ?? record.key) as { name?: string } | undefined
      if (id?.name !== undefined) here = id.name
    }
    if (record.type === "MethodDefinition") {
      const key = record.key as { name?: string } | undefined
      if (key?.name !== undefined) here = key.name
    }
    if (record.type !== undefined && functionTypes.has(record.type)) {
      const id = record.id as { name?: string } | null | undefined
      const fname = id?.name ?? here
      functions.push({
        name: fname === "" ? "(anonymous)" : fname,
        line: lineOf(record.start as number) + 1,
        lines: codeLines(record.start as number, record.end as number)
      })
      here = ""
    }
    for (const key of Object.keys(record)) {
      if (key !== "type" && key !== "start" && key !== "end") visit(record[key], here)
    }
  }
  const parsed = parseSync(path, text)
  visit(parsed.program, "")
  return { file: relative(root, path), lines: code.filter(Boolean).length, functions }
}

const packages = join(root, "packages")
const measured = readdirSync(packages)
  .map((name) => join(packages, name, "src"))
  .filter((dir) => {
    try {
      return statSync(dir).isDirectory()
    } catch {
      return false
    }
  })
  .flatMap(sourceFiles)
  .map(measure)

const files = measured.slice().sort((a, b) => b.lines - a.lines)
const functions = measured
  .flatMap((m) => m.functions.map((f) => ({ ...f, file: m.file })))
  .sort((a, b) => b.lines - a.lines)

const check = process.argv.includes("--check")
const overFiles = files.filter((f) => f.lines > maxFileLines)
const overFunctions = functions.filter((f) => f.lines > maxFunctionLines)

console.log(`${measured.length} source files, ${files.reduce((n, f) => n + f.lines, 0)} lines of code`)
console.log(`largest files (lines of code; limit ${maxFileLines}):`)
for (const f of files.slice(0, check ? Math.max(overFiles.length, 5) : 15)) console.log(`  ${f.lines}\t${f.file}`)
console.log(`largest functions (lines of code in the span, nested ones included; limit ${maxFunctionLines}):`)
for (const f of functions.slice(0, check ? Math.max(overFunctions.length, 5) : 15)) {
  console.log(`  ${f.lines}\t${f.file}:${f.line} ${f.name}`)
}
if (check && (overFiles.length > 0 || overFunctions.length > 0)) {
  console.log(
    `${overFiles.length} files over ${maxFileLines}, ${overFunctions.length} functions over ${maxFunctionLines}`
  )
  process.exit(1)
}
