/**
 * The part of a thread a turn sends the model: with no budget, every exchange after the thread's summary; with a
 * budget, the newest whole exchanges that fit beside the system message, the tool schemas, the summary and the new
 * input (a budget smaller than those fixed parts is VALIDATION naming both sizes). With the
 * summarising strategy, a history over the budget first has its oldest exchanges folded into the summary by the
 * author's action (run through the agent's pipeline, its tokens counted in the turn), until the rest fits in
 * `keepTokens`; whatever still does not fit is dropped, oldest first. Refuses, as VALIDATION, a budget whose
 * `maxTokens` or `keepTokens` is not an integer >= 1; a summarising action that fails fails the turn with its error.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { type ActionError, ExecutionFailure, isActionError, type ValidationError } from "../../ActionError.ts"
import type { Usage } from "../../Chat.ts"
import * as History from "../../History.ts"
import * as LanguageModel from "../../LanguageModel.ts"
import type * as Prompt from "../../Prompt.ts"
import type { StoreError } from "../../StoreBoundary.ts"
import * as ToolContent from "../../ToolContent.ts"
import { cut } from "../text.ts"
import type { Exchange, Head, Held, IndexEntry } from "../thread/rules.ts"
import type { Host } from "./context.ts"
import * as ChatMessages from "./messages.ts"

/** What a turn sends of its thread: the summary, and the exchanges from `from` on. */
export interface Window {
  readonly summary: Head["summary"]
  readonly from: number
  readonly exchanges: ReadonlyArray<Exchange>
  /** Tokens spent summarising. */
  readonly usage: Usage
}

const zero: Usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 }

/** A budget checked: `maxTokens` and `keepTokens` integers >= 1. */
export const checkBudget = (
  action: string,
  budget: History.Budget | undefined
): Result.Result<History.Budget | undefined, ValidationError> => {
  if (budget === undefined) return Result.succeed(undefined)
  const positive = (value: unknown) => typeof value === "number" && Number.isInteger(value) && value >= 1
  if (!positive(budget.maxTokens)) {
    return Result.fail(
      ChatMessages.invalid(
        action,
        "thread.budget.maxTokens",
        `thread.budget.maxTokens must be an integer >= 1, got ${String(budget.maxTokens)}`
      )
    )
  }
  const strategy = budget.strategy ?? History.dropOldest
  if (strategy._tag === "Summarize") {
    if (strategy.keepTokens !== undefined && !positive(strategy.keepTokens)) {
      return Result.fail(
        ChatMessages.invalid(
          action,
          "thread.budget.strategy.keepTokens",
          `thread.budget.strategy.keepTokens must be an integer >= 1, got ${String(strategy.keepTokens)}`
        )
      )
    }
    if (typeof strategy.action !== "string" || strategy.action === "") {
      return Result.fail(
        ChatMessages.invalid(action, "thread.budget.strategy.action", "History.summarize needs an action name")
      )
    }
  }
  return Result.succeed(budget)
}

const summaryTokens = (summary: Head["summary"]): number =>
  summary === undefined ? 0 : History.estimateTokens(History.summaryMessage(summary.text))

/** The summary of `exchanges` after `previous`, by the agent's action `action`, and the tokens it spent. */
const summarise = <R>(
  host: Host<R>,
  action: string,
  previous: Head["summary"],
  exchanges: ReadonlyArray<Exchange>,
  maxTokens: number
): Effect.Effect<{ readonly summary: NonNullable<Head["summary"]>; readonly usage: Usage }, ActionError, R> =>
  Effect.flatMap(LanguageModel.makeUsageMeter, (meter) => {
    const conversation = History.transcript(
      previous?.text,
      exchanges.map((exchange) => exchange.messages)
    )
    const ran = host.run(host.call(action, undefined, { conversation }, {})).pipe(
      Effect.mapError(
        (error): ActionError =>
          isActionError(error) ? error : new ExecutionFailure({ action, message: error.message, cause: error })
      ),
      Effect.provideService(LanguageModel.UsageMeter, meter)
    )
    return Effect.flatMap(Effect.zip(ran, meter.total), ([value, { usage }]) => {
      const written = ToolContent.success(value, { action })
      if (Result.isFailure(written)) return Effect.fail(written.failure)
      const last = exchanges[exchanges.length - 1] as Exchange
      // A summary is kept to a quarter of the budget (about as many characters as the budget has tokens).
      return Effect.succeed({ summary: { text: cut(written.success, maxTokens), through: last.seq }, usage })
    })
  })

/**
 * The window of `held` a turn sends, given the `fixed` messages sent whatever the budget (the system message and
 * the new input), the estimated tokens of the tool schemas every request carries (`toolTokens`) and the thread's
 * `index`. A budget smaller than that fixed part is VALIDATION naming both sizes, before any model call.
 */
export const choose = <R>(
  host: Host<R>,
  held: Held,
  index: ReadonlyArray<IndexEntry>,
  budget: History.Budget | undefined,
  fixed: ReadonlyArray<Prompt.Message>,
  toolTokens: number
): Effect.Effect<Window, ActionError | StoreError, R> =>
  Effect.gen(function* () {
    const last = held.head.exchanges
    let summary = held.head.summary
    let unfolded = index.filter((entry) => entry.seq > (summary?.through ?? 0))
    let usage = zero
    if (budget !== undefined) {
      const fixedTokens = History.estimateAll(fixed) + toolTokens
      if (fixedTokens > budget.maxTokens) {
        return yield* ChatMessages.invalid(
          "chat",
          "thread.budget.maxTokens",
          `thread.budget.maxTokens is ${budget.maxTokens} tokens, less than what every request of the turn sends: ${fixedTokens} tokens (the system message and the new input ${fixedTokens - toolTokens}, the tool schemas ${toolTokens}); raise the budget or offer fewer tools`
        )
      }
      const sizes = () => unfolded.map((entry) => entry.tokens)
      const strategy = budget.strategy ?? History.dropOldest
      const total = fixedTokens + summaryTokens(summary) + sizes().reduce((a, b) => a + b, 0)
      if (strategy._tag === "Summarize" && total > budget.maxTokens) {
        const keep = strategy.keepTokens ?? Math.max(1, Math.floor(budget.maxTokens / 2))
        const folded = History.firstKept(sizes(), 0, keep)
        if (folded > 0) {
          const through = (unfolded[folded - 1] as IndexEntry).seq
          const exchanges = yield* held.exchanges((unfolded[0] as IndexEntry).seq, through)
          const written = yield* summarise(host, strategy.action, summary, exchanges, budget.maxTokens)
          summary = written.summary
          usage = written.usage
          unfolded = unfolded.slice(folded)
        }
      }
      unfolded = unfolded.slice(History.firstKept(sizes(), fixedTokens + summaryTokens(summary), budget.maxTokens))
    }
    const from = unfolded[0]?.seq ?? last + 1
    const exchanges = from > last ? [] : yield* held.exchanges(from, last)
    return { summary, from, exchanges, usage }
  })
