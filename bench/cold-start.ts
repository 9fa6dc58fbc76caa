/**
 * Cold start: the time to `import` each framework's entry point in a fresh
 * Node process. Each child is `node --input-type=module -e …` started in the
 * bench package (so bare names resolve as they would for a user); inside it,
 * `performance.now()` is read around the dynamic `import()` calls, so process
 * start-up is left out and only loading, compiling and evaluating the
 * modules is counted. Rolecraft is imported from its build (`dist/`, what
 * `npm ci` and `npm run bench` build) and, for comparison, from its
 * TypeScript sources (the `@rolecraft/source` condition: Node strips types at
 * import). A discarded round warms the disk cache, then
 * `runs` rounds import each entry once (round-robin); the median is reported.
 *
 * Target (issue 16): Rolecraft's cold import ≤ 1.0× `import "effect"` in
 * every round (the runs are split into 3 rounds of consecutive runs).
 *
 * Run: node bench/cold-start.ts
 */
import { execFile } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { defaultRounds, loadedPass, metInEvery, percentile, quickMode, spreadAcross, summarize } from "./measure.ts"
import { isMain, printSection, repositoryRoot, type Section, spread, times } from "./report.ts"

/** What each row imports, in order, in one child, and the export conditions the child resolves with. */
export const entries: ReadonlyArray<{
  readonly name: string
  readonly specifiers: ReadonlyArray<string>
  readonly conditions?: ReadonlyArray<string>
}> = [
  { name: "effect", specifiers: ["effect"] },
  { name: "@rolecraft/core", specifiers: ["@rolecraft/core"] },
  {
    name: "@rolecraft/core (TypeScript sources)",
    specifiers: ["@rolecraft/core"],
    conditions: ["@rolecraft/source"]
  },
  { name: "ai", specifiers: ["ai"] },
  { name: "@openai/agents", specifiers: ["@openai/agents"] },
  { name: "langchain + @langchain/core", specifiers: ["langchain", "@langchain/core"] }
]

const run = promisify(execFile)
const benchDirectory = dirname(fileURLToPath(import.meta.url))

/** The child's program: import the specifiers, print the elapsed ms. */
const program = (specifiers: ReadonlyArray<string>): string =>
  [
    "const start = performance.now()",
    ...specifiers.map((specifier) => `await import(${JSON.stringify(specifier)})`),
    "console.log(String(performance.now() - start))"
  ].join("\n")

/** One cold import in a fresh process, ms. */
export const coldImport = async (
  specifiers: ReadonlyArray<string>,
  conditions: ReadonlyArray<string> = []
): Promise<number> => {
  const flags = conditions.map((condition) => `--conditions=${condition}`)
  const { stdout } = await run(process.execPath, [...flags, "--input-type=module", "-e", program(specifiers)], {
    cwd: benchDirectory,
    timeout: 60_000
  })
  const ms = Number(stdout.trim().split("\n").at(-1))
  if (!Number.isFinite(ms)) throw new Error(`cold import of ${specifiers.join(", ")} printed ${stdout}`)
  return ms
}

/**
 * Medians of `runs` cold imports per entry, ms. Runs go round-robin (one of
 * each entry per round) so that a change of load on the machine during the
 * run weighs on every entry alike; a first round is discarded.
 */
export const measureColdStart = async (runs = 6, measured: typeof entries = entries) => {
  const samples = measured.map(() => [] as Array<number>)
  // The target's two rows take every run; the others, there for comparison, one run per round.
  const runsOf = (entry: (typeof entries)[number]) =>
    entry.name === "effect" || entry.name === "@rolecraft/core" ? runs : Math.min(runs, defaultRounds)
  for (let round = 0; round <= runs; round++) {
    for (const [i, entry] of measured.entries()) {
      if (round > runsOf(entry)) continue
      const ms = await coldImport(entry.specifiers, entry.conditions)
      if (round > 0) samples[i]?.push(ms)
    }
  }
  return measured.map((entry, i) => {
    const ms = samples[i] ?? []
    const perRound = Math.ceil(runsOf(entry) / defaultRounds)
    const rounds = Array.from({ length: defaultRounds }, (_, r) => ms.slice(r * perRound, (r + 1) * perRound))
    return {
      name: entry.name,
      medianMs: percentile(ms, 0.5),
      minMs: Math.min(...ms),
      maxMs: Math.max(...ms),
      // The figures of the same runs in the harness's shape (ms for µs), for ratios per round.
      figures: summarize(entry.name, ms, rounds)
    }
  })
}

/**
 * Facts about how @rolecraft/core is loaded that bear on its cold import:
 * which file a plain import resolves to (the build in `dist/`, or TypeScript
 * sources that Node strips at import), and how many of its modules import
 * the `effect` barrel (which loads every effect module, where deep imports
 * such as `effect/Effect` load only those used).
 */
export const loadingNotes = (): ReadonlyArray<string> => {
  const core = join(repositoryRoot, "packages/core")
  const entry = fileURLToPath(import.meta.resolve("@rolecraft/core"))
  const shipped = entry.endsWith(".js") ? join(core, "dist") : join(core, "src")
  const modules = readdirSync(shipped, { recursive: true, encoding: "utf8" }).filter(
    (file) => file.endsWith(".js") || (file.endsWith(".ts") && !file.endsWith(".d.ts"))
  )
  const barrel = modules.filter((file) =>
    /from "effect"/.test(readFileSync(join(shipped, file), "utf8").replace(/^\s*\*.*$/gm, ""))
  )
  return [
    entry.endsWith(".js")
      ? `\`import "@rolecraft/core"\` loads its build (${relative(repositoryRoot, entry)}, JavaScript emitted by tsc, ` +
        `${modules.length} modules); the row "TypeScript sources" loads src/ under the \`@rolecraft/source\` ` +
        "condition instead, where Node strips the types at import."
      : `\`import "@rolecraft/core"\` loads its TypeScript sources (${relative(repositoryRoot, entry)}): Node strips ` +
        `the types of its ${modules.length} modules at import. Run \`npm run build\` first.`,
    barrel.length === 0
      ? "Its modules import effect by path (`effect/Effect`, `effect/Schema`, …), never the `effect` barrel."
      : `${barrel.length} of its modules import the \`effect\` barrel, which loads every effect module.`
  ]
}

/** The cold-start bench as a report section. */
export const bench = async (runs = quickMode() ? defaultRounds : 6): Promise<Section> => {
  // Under load (and in quick mode) only the target's two rows: a cold import is a whole process, and the run must stay short.
  const rows = await measureColdStart(
    runs,
    loadedPass() || quickMode()
      ? entries.filter((entry) => entry.name === "effect" || entry.name === "@rolecraft/core")
      : entries
  )
  const effect = rows.find((row) => row.name === "effect")
  const rolecraft = rows.find((row) => row.name === "@rolecraft/core")
  const ratio = spreadAcross([rolecraft?.figures, effect?.figures], ([x = Number.NaN, y = Number.NaN]) => x / y)
  return {
    title: "Cold start: importing each entry point in a fresh process",
    description:
      "`node --input-type=module -e` in a fresh process per run; the time is read inside the child around the " +
      `dynamic \`import()\` (process start-up excluded). One discarded round, then ${runs} rounds importing each ` +
      "entry once (round-robin, so load changes weigh on all alike; the rows other than effect and @rolecraft/core " +
      `only in the first ${defaultRounds}); median, with the fastest and slowest run. ` +
      `The target's ratio is read per ${Math.ceil(runs / defaultRounds)} consecutive runs (its range in brackets).`,
    tables: [
      {
        columns: ["entry point", "median ms", "min ms", "max ms", "× effect", "× Rolecraft"],
        rows: rows.map((row) => [
          row.name,
          row.medianMs.toFixed(0),
          row.minMs.toFixed(0),
          row.maxMs.toFixed(0),
          times(row.medianMs / (effect?.medianMs ?? Number.NaN)),
          times(row.medianMs / (rolecraft?.medianMs ?? Number.NaN))
        ])
      }
    ],
    targets: [
      {
        name: "Rolecraft's cold import",
        limit: '≤ 1.00× import "effect"',
        measured: `${rolecraft?.medianMs.toFixed(0)} ms vs ${effect?.medianMs.toFixed(0)} ms = ${spread(ratio)}`,
        met: Number.isFinite(ratio.value) ? metInEvery(ratio, 1) : undefined
      }
    ],
    notes: loadingNotes()
  }
}

if (isMain(import.meta)) await printSection(() => bench())
