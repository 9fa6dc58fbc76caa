/**
 * The tour's printed transcript. Each step shows its title, the action, its
 * type and its arguments (secrets redacted), then — once it has run — a mark
 * saying whether it did what it must, its time, and its result or its error
 * category and message. While a step runs, a terminal shows a spinner with
 * the time so far; output that is not a terminal (CI, a pipe) gets plain
 * lines only, and a "still running" line every two seconds for a slow step.
 * The summary table at the end lists every step; `summary` says whether all
 * of them did what they must (the tour's exit code).
 *
 * Secrets: argument fields whose names look like credentials are shown as
 * `‹redacted›`, and every secret value given to `make` is replaced wherever it
 * would appear in printed text (a last line of defence: Rolecraft already
 * scrubs its errors).
 */
import { styleText } from "node:util"
import type { ActionResponse } from "@rolecraft/core"
import { Clock, Effect, Fiber, Redacted, Schedule } from "effect"

/**
 * What a step's run produced: a success value, or a typed failure. `notes`
 * are printed under the result; `facts` are what else the step observed (a
 * count on the API, say), for its `must` check.
 */
export type Outcome = (
  | {
      readonly ok: true
      readonly value: unknown
      readonly usage?: ActionResponse.Usage | undefined
    }
  | {
      readonly ok: false
      readonly category: string
      readonly detail?: string | undefined
      readonly message: string
    }
) & {
  readonly notes?: ReadonlyArray<string> | undefined
  readonly facts?: Readonly<Record<string, number>> | undefined
}

/**
 * One step of the tour. `must(outcome)` returns `undefined` when the step
 * did what it must, or what went wrong.
 */
export interface Step<R> {
  readonly title: string
  /** A short name for the summary table. */
  readonly label: string
  readonly action: string
  readonly type: string
  readonly about?: string | undefined
  readonly args?: unknown
  readonly run: Effect.Effect<Outcome, never, R>
  readonly must: (outcome: Outcome) => string | undefined
  /** The step prints as it runs (a streamed turn): no progress ticker over its output. */
  readonly live?: boolean | undefined
}

/** A row of the summary table. */
export interface Row {
  readonly index: number
  readonly label: string
  readonly action: string
  readonly type: string
  readonly outcome: string
  readonly millis: number
  readonly held: boolean
}

export interface Transcript {
  readonly line: (text?: string) => Effect.Effect<void>
  readonly heading: (text: string) => Effect.Effect<void>
  readonly step: <R>(step: Step<R>) => Effect.Effect<Row, never, R>
  /** Prints the summary table; `true` when every step did what it must. */
  readonly summary: (footer: ReadonlyArray<string>) => Effect.Effect<boolean>
}

/** The outcome of an `ActionResponse`: its value, or its error's category and message. */
export const fromResponse = (response: ActionResponse.ActionResponse): Outcome => {
  if (response.success) return { ok: true, value: response.value, usage: response.usage }
  const error = response.error
  const detail =
    error._tag === "ApprovalRequired"
      ? error.check
      : (error._tag === "ExecutionFailure" || error._tag === "TransientFailure") && error.status !== undefined
        ? String(error.status)
        : undefined
  return { ok: false, category: error.category, detail, message: error.message }
}

const credential = /token|secret|password|passwd|api[-_]?key|authorization|credential/i

/** Arguments with credential-looking fields replaced by `‹redacted›`, at any depth. */
export const redactArguments = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(redactArguments)
  if (typeof value !== "object" || value === null) return value
  return Object.fromEntries(
    Object.entries(value).map(([key, field]) => [key, credential.test(key) ? "‹redacted›" : redactArguments(field)])
  )
}

/**
 * Text cut into lines of at most `width` characters at spaces (a word longer
 * than a line is cut), at most `maxLines` lines, the last ending with `…`
 * when text was left out.
 */
export const wrap = (text: string, width: number, maxLines = 4): ReadonlyArray<string> => {
  const lines: Array<string> = []
  let rest = text.replace(/\s+/g, " ").trim()
  while (rest.length > 0 && lines.length < maxLines) {
    if (rest.length <= width) {
      lines.push(rest)
      rest = ""
      break
    }
    const space = rest.lastIndexOf(" ", width)
    const cut = space > width / 2 ? space : width
    lines.push(rest.slice(0, cut))
    rest = rest.slice(cut).trimStart()
  }
  if (rest.length > 0) {
    const last = lines[lines.length - 1] ?? ""
    lines[lines.length - 1] = `${last.slice(0, Math.max(0, width - 1))}…`
  }
  return lines
}

/** Items joined with `separator` into lines of at most `width` characters, never breaking an item. */
export const wrapItems = (items: ReadonlyArray<string>, width: number, separator = " · "): ReadonlyArray<string> => {
  const lines: Array<string> = []
  let current = ""
  for (const item of items) {
    if (current === "") current = item
    else if (current.length + separator.length + item.length <= width) current += separator + item
    else {
      lines.push(current + separator.trimEnd())
      current = item
    }
  }
  if (current !== "") lines.push(current)
  return lines
}

/** A value as one line of compact JSON (strings quoted), cut to `width` characters. */
export const show = (value: unknown, width: number): string => {
  const text = value === undefined ? "undefined" : (JSON.stringify(value) ?? String(value))
  const flat = text.replace(/\s*\n\s*/g, " ")
  return flat.length <= width ? flat : `${flat.slice(0, Math.max(0, width - 1))}…`
}

const formatMillis = (millis: number): string =>
  millis < 10
    ? `${millis.toFixed(1)} ms`
    : millis < 10_000
      ? `${Math.round(millis)} ms`
      : `${(millis / 1000).toFixed(1)} s`

const outcomeLabel = (outcome: Outcome): string =>
  outcome.ok ? "ok" : `${outcome.category}${outcome.detail === undefined ? "" : ` (${outcome.detail})`}`

const pad = (text: string, width: number) => (text.length >= width ? text : text + " ".repeat(width - text.length))
const padStart = (text: string, width: number) => (text.length >= width ? text : " ".repeat(width - text.length) + text)

const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

/**
 * Makes a transcript printing to stdout. `secrets` are replaced by
 * `[REDACTED]` in everything printed.
 */
export const make = (options: { readonly secrets: () => ReadonlyArray<Redacted.Redacted<string>> }): Transcript => {
  const tty = process.stdout.isTTY === true
  const width = Math.max(80, Math.min(tty ? (process.stdout.columns ?? 120) : 120, 160))
  const rows: Array<Row> = []
  const style = (format: Parameters<typeof styleText>[0], text: string) =>
    styleText(format, text, { stream: process.stdout })

  const scrub = (text: string): string => {
    let out = text
    for (const secret of options.secrets()) {
      const value = Redacted.value(secret)
      if (value.length > 0) out = out.split(value).join("[REDACTED]")
    }
    return out
  }
  const write = (text: string) => Effect.sync(() => process.stdout.write(scrub(text)))
  const line = (text = "") => write(`${text}\n`)

  const progress = (start: bigint) =>
    Effect.gen(function* () {
      const now = yield* Clock.monotonicTimeNanos
      const seconds = Number(now - start) / 1e9
      const frame = frames[Math.floor(seconds * 10) % frames.length] ?? "…"
      yield* tty
        ? write(`\r\x1b[2K     ${style("cyan", frame)} ${seconds.toFixed(1)} s  running…`)
        : seconds >= 1.9
          ? line(`     … still running (${seconds.toFixed(0)} s)`)
          : Effect.void
    }).pipe(Effect.repeat(Schedule.spaced(tty ? "80 millis" : "2 seconds")))

  const step = <R>(spec: Step<R>): Effect.Effect<Row, never, R> =>
    Effect.gen(function* () {
      const index = rows.length + 1
      yield* line()
      yield* line(`${style("bold", padStart(String(index), 3))}  ${style("bold", spec.title)}`)
      const about = spec.about === undefined ? "" : `  ${style("dim", spec.about)}`
      yield* line(`     ${style("yellow", spec.action)}  ${style("magenta", spec.type)}${about}`)
      if (spec.args !== undefined) {
        yield* line(`     ${style("dim", "args")} ${show(redactArguments(spec.args), width - 11)}`)
      }
      const start = yield* Clock.monotonicTimeNanos
      const ticker = spec.live === true ? undefined : yield* Effect.forkChild(progress(start))
      const outcome = yield* spec.run
      if (ticker !== undefined) {
        yield* Fiber.interrupt(ticker)
        if (tty) yield* write("\r\x1b[2K")
      }
      const millis = Number((yield* Clock.monotonicTimeNanos) - start) / 1e6
      const problem = spec.must(outcome)
      const mark = problem === undefined ? style("green", "✓") : style("red", "✗")
      const time = padStart(formatMillis(millis), 8)
      const indent = " ".repeat(17)
      const room = width - indent.length
      if (outcome.ok) {
        yield* line(`     ${mark} ${time}  ${show(outcome.value, room)}`)
        if (outcome.usage !== undefined) {
          const { totalTokens, inputTokens, outputTokens } = outcome.usage
          yield* line(
            `${indent}${style("dim", `usage: ${totalTokens} tokens (${inputTokens} in, ${outputTokens} out)`)}`
          )
        }
      } else {
        const label = outcomeLabel(outcome)
        const [first = "", ...more] = wrap(`${label}: ${outcome.message}`, room)
        yield* line(`     ${mark} ${time}  ${style("yellow", label)}${first.slice(label.length)}`)
        for (const text of more) yield* line(`${indent}${text}`)
      }
      for (const note of outcome.notes ?? []) {
        for (const text of wrap(note, room)) yield* line(`${indent}${style("dim", text)}`)
      }
      if (problem !== undefined) yield* line(`     ${style("red", `did not do what it must: ${problem}`)}`)
      const row: Row = {
        index,
        label: spec.label,
        action: spec.action,
        type: spec.type,
        outcome: outcomeLabel(outcome),
        millis,
        held: problem === undefined
      }
      rows.push(row)
      return row
    })

  const summary = (footer: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      const titleWidth = Math.max(4, ...rows.map((row) => row.label.length))
      const actionWidth = Math.max(6, ...rows.map((row) => row.action.length))
      const typeWidth = Math.max(4, ...rows.map((row) => row.type.length))
      const outcomeWidth = Math.max(7, ...rows.map((row) => row.outcome.length))
      const header = [
        padStart("#", 3),
        pad("step", titleWidth),
        pad("action", actionWidth),
        pad("type", typeWidth),
        pad("outcome", outcomeWidth),
        padStart("time", 8),
        "must"
      ].join("  ")
      yield* line()
      yield* line(style("bold", "Summary"))
      yield* line(style("bold", header))
      for (const row of rows) {
        yield* line(
          [
            padStart(String(row.index), 3),
            pad(row.label, titleWidth),
            pad(row.action, actionWidth),
            pad(row.type, typeWidth),
            pad(row.outcome, outcomeWidth),
            padStart(formatMillis(row.millis), 8),
            row.held ? style("green", "✓") : style("red", "✗")
          ].join("  ")
        )
      }
      const held = rows.filter((row) => row.held).length
      const all = held === rows.length
      const total = rows.reduce((sum, row) => sum + row.millis, 0)
      yield* line()
      yield* line(
        style(
          all ? "green" : "red",
          `${rows.length} steps, ${held} did what they must${all ? "" : `, ${rows.length - held} did not`} ` +
            `(${formatMillis(total)} in steps).`
        )
      )
      for (const text of footer) yield* line(text)
      return all
    })

  return {
    line,
    heading: (text) => Effect.andThen(line(), line(style("bold", text))),
    step,
    summary
  }
}
