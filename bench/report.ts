/**
 * What a bench module hands to `run.ts`, and how it is printed: a `Section`
 * holds tables of preformatted cells and the targets it checked. Each bench
 * module (`chat.ts`, `pipeline.ts`, `cold-start.ts`, and later
 * `webservice.ts`, `mcp.ts`) exports one function returning a `Section`, and
 * still runs standalone (`isMain(import.meta)`), printing its own section
 * (`printSection`; as JSON with `--json`, which is how `run.ts` runs each
 * section in a fresh process).
 */
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import * as os from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { type Figures, metInEvery, ratioOf, type Spread } from "./measure.ts"

/** A table: a header row and rows of cells, all strings. */
export interface Table {
  readonly title?: string
  readonly columns: ReadonlyArray<string>
  readonly rows: ReadonlyArray<ReadonlyArray<string>>
}

/**
 * One target of the issue and what this run measured for it. `met` is
 * `undefined` when it could not be measured in this run (say why in
 * `measured`).
 */
export interface Target {
  readonly name: string
  readonly limit: string
  readonly measured: string
  readonly met: boolean | undefined
}

/**
 * A curve to plot (`plot.ts`): one series per framework, x the work (e.g.
 * concurrent turns, on a log scale), y the figure. `run.ts` writes each to
 * `bench/<file>` after a full run; docs/performance.md shows them.
 */
export interface Curve {
  /** The SVG's file name in `bench/`, e.g. `curve-turns-per-second.svg`. */
  readonly file: string
  readonly title: string
  readonly x: string
  readonly y: string
  readonly series: ReadonlyArray<{
    readonly name: string
    readonly points: ReadonlyArray<readonly [x: number, y: number]>
  }>
}

export interface Section {
  readonly title: string
  /** What was measured and how, in a sentence or two. */
  readonly description: string
  readonly tables: ReadonlyArray<Table>
  readonly targets: ReadonlyArray<Target>
  readonly notes: ReadonlyArray<string>
  /** Curves to plot, if the section measures work as it grows. */
  readonly curves?: ReadonlyArray<Curve>
}

/** True when the module `meta` belongs to is the script node was started with. */
export const isMain = (meta: ImportMeta): boolean =>
  meta.main === true || (process.argv[1] !== undefined && resolve(process.argv[1]) === meta.filename)

/**
 * What a bench module does when run as a script: runs its section and prints
 * it as text, or, with `--json` (how `run.ts` runs each section in a fresh
 * process), as one line of JSON.
 */
export const printSection = async (bench: () => Promise<Section>): Promise<void> => {
  const section = await bench()
  console.log(process.argv.includes("--json") ? JSON.stringify(section) : formatText(section))
}

/** µs with a precision that suits the size. */
export const us = (value: number): string =>
  !Number.isFinite(value) ? "—" : value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2)

/** A ratio as `1.23×`. */
export const times = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(2)}×` : "—")

/**
 * A figure read per round, as its overall value and the range of its
 * rounds: `1.23× (1.19–1.30)`; `format` renders one value (default `times`).
 */
export const spread = (value: Spread, format: (n: number) => string = times): string =>
  value.rounds.length < 2 ? format(value.value) : `${format(value.value)} (${format(value.min)}–${format(value.max)})`

/**
 * The standard table of timed calls: median and p95 per call, samples, and
 * each row's median as a ratio to `baseline`'s (a row name) when given,
 * with the range of that ratio over the rounds.
 */
export const figuresTable = (rows: ReadonlyArray<Figures>, baseline?: string, title?: string): Table => {
  const base = rows.find((row) => row.name === baseline)
  return {
    ...(title === undefined ? {} : { title }),
    columns: ["", "median µs", "p95 µs", "samples", ...(base === undefined ? [] : [`× ${base.name} (rounds min–max)`])],
    rows: rows.map((row) => [
      row.name,
      us(row.medianUs),
      us(row.p95Us),
      String(row.samples),
      ...(base === undefined ? [] : [spread(ratioOf(row, base))])
    ])
  }
}

/**
 * A target on the ratio of two rows' medians, met only when it is met in
 * every round: `measured` reads "548 µs vs 432 µs = 1.27× (1.21–1.33)".
 */
export const ratioTarget = (
  name: string,
  limit: number,
  baseline: string,
  row: Figures | undefined,
  base: Figures | undefined
): Target => {
  const ratio = ratioOf(row, base)
  return {
    name,
    limit: `≤ ${limit.toFixed(2)}× ${baseline}`,
    measured: `${us(row?.medianUs ?? Number.NaN)} µs vs ${us(base?.medianUs ?? Number.NaN)} µs = ${spread(ratio)}`,
    met: Number.isFinite(ratio.value) ? metInEvery(ratio, limit) : undefined
  }
}

const verdict = (met: boolean | undefined): string => (met === undefined ? "not measured" : met ? "met" : "MISSED")

/** A section as aligned plain text, for the console. */
export const formatText = (section: Section): string => {
  const lines = [`== ${section.title}`]
  for (const table of section.tables) {
    if (table.title !== undefined) lines.push(`-- ${table.title}`)
    const all = [table.columns, ...table.rows]
    const widths = table.columns.map((_, i) => Math.max(...all.map((row) => (row[i] ?? "").length)))
    for (const row of all) {
      lines.push(
        row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join("  ")
      )
    }
  }
  for (const target of section.targets) {
    lines.push(`target: ${target.name} (${target.limit}): ${target.measured} — ${verdict(target.met)}`)
  }
  for (const note of section.notes) lines.push(`note: ${note}`)
  return lines.join("\n")
}

const markdownTable = (table: Table): string => {
  const escapeCell = (cell: string) => cell.replaceAll("|", "\\|")
  const header = `| ${table.columns.map(escapeCell).join(" | ")} |`
  const numeric = (i: number) =>
    table.rows.some((row) => (row[i] ?? "") !== "") &&
    table.rows.every((row) =>
      /^([-\d.,]+ ?(µs|ms|×|KiB|B)?( \([-\d.,]+ ?(µs|ms|×|KiB|B)?–[-\d.,]+ ?(µs|ms|×|KiB|B)?\))?|—|not .*|)$/.test(
        row[i] ?? ""
      )
    )
  const rule = `| ${table.columns.map((_, i) => (numeric(i) ? "---:" : "---")).join(" | ")} |`
  const body = table.rows.map((row) => `| ${row.map(escapeCell).join(" | ")} |`)
  return [header, rule, ...body].join("\n")
}

/** A section as Markdown, for BENCHMARKS.md. */
export const formatMarkdown = (section: Section): string => {
  const parts = [`## ${section.title}`, section.description]
  for (const table of section.tables) {
    if (table.title !== undefined) parts.push(`### ${table.title}`)
    parts.push(markdownTable(table))
  }
  if (section.notes.length > 0) parts.push(section.notes.map((note) => `- ${note}`).join("\n"))
  return parts.join("\n\n")
}

/** All targets of all sections as one Markdown table. */
export const targetsTable = (sections: ReadonlyArray<Section>): Table => ({
  columns: ["target", "limit", "measured", "verdict"],
  rows: sections.flatMap((section) =>
    section.targets.map((target) => [target.name, target.limit, target.measured, verdict(target.met)])
  )
})

/**
 * The targets of several passes (quiet, loaded) as one table: each pass's
 * measurement side by side, and one verdict, met only when every pass met it
 * (targets are paired by section and name).
 */
export const passesTargetsTable = (
  passes: ReadonlyArray<{ readonly name: string; readonly sections: ReadonlyArray<Section> }>
): Table => {
  const [first] = passes
  if (first === undefined) return { columns: ["target"], rows: [] }
  const find = (sections: ReadonlyArray<Section>, title: string, name: string) =>
    sections.find((section) => section.title === title)?.targets.find((target) => target.name === name)
  return {
    columns: ["target", "limit", ...passes.map((pass) => `${pass.name}: measured`), "verdict"],
    rows: first.sections.flatMap((section) =>
      section.targets.map((target) => {
        const found = passes.map((pass) => find(pass.sections, section.title, target.name))
        const missedIn = passes.filter((_, i) => found[i]?.met === false).map((pass) => pass.name)
        const unmeasured = found.some((t) => t === undefined || t.met === undefined)
        return [
          target.name,
          target.limit,
          ...found.map((t) => (t === undefined ? "not run" : t.measured)),
          missedIn.length > 0 ? `MISSED (${missedIn.join(", ")})` : unmeasured ? "not measured" : "met"
        ]
      })
    )
  }
}

export { markdownTable }

/** The machine the figures come from. */
export const machine = () => {
  const cpus = os.cpus()
  return {
    cores: cpus.length,
    availableParallelism: os.availableParallelism(),
    model: cpus[0]?.model.trim() ?? "unknown",
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30)
  }
}

const benchDirectory = dirname(fileURLToPath(import.meta.url))

/** The repository root (the bench package's parent). */
export const repositoryRoot = resolve(benchDirectory, "..")

/**
 * The installed version of `name`, read from its package.json: found by
 * resolving the package from the bench package and walking up to the
 * package.json whose `name` is `name` (some packages do not export
 * `./package.json`).
 */
export const versionOf = (name: string): string => {
  let directory: string
  try {
    directory = dirname(fileURLToPath(import.meta.resolve(name)))
  } catch {
    return "not installed"
  }
  for (;;) {
    const candidate = join(directory, "package.json")
    if (existsSync(candidate)) {
      const manifest = JSON.parse(readFileSync(candidate, "utf8")) as { name?: string; version?: string }
      if (manifest.name === name) return manifest.version ?? "unknown"
    }
    const parent = dirname(directory)
    if (parent === directory) return "unknown"
    directory = parent
  }
}

/** The commit the run measured (short hash, `+dirty` when the work tree has changes), or `unknown`. */
export const commit = (): string => {
  try {
    const hash = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: repositoryRoot, encoding: "utf8" })
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], {
      cwd: repositoryRoot,
      encoding: "utf8"
    })
    return `${hash.trim()}${dirty.trim() === "" ? "" : "+dirty"}`
  } catch {
    return "unknown"
  }
}
