/**
 * A conversation's history within a token budget: what a thread's turn (or
 * your own code, with {@link trim}) sends the model when the whole history
 * would not fit its context window.
 *
 * - The unit that is dropped or summarised is a whole **exchange**: a user
 *   message and every message after it up to the next user message (the
 *   model's replies, its tool calls and their answers). A tool call is never
 *   separated from its answer, and no answer is left without its call.
 * - System messages stay, and so does the newest exchange (the one the model
 *   must answer): when they alone exceed the budget, they are all that is
 *   sent.
 * - Tokens are an **estimate** ({@link estimateTokens}): ⌈characters / 4⌉ + 4
 *   per message. It needs no tokenizer and no call to the provider, and is
 *   close for English prose; it can undercount text in scripts such as
 *   Chinese or Japanese, and dense code — leave a margin under the model's
 *   real context window.
 *
 * Two strategies, picked per thread ({@link Budget}): {@link dropOldest} (the
 * default) and {@link summarize} (the oldest exchanges folded into a summary
 * by an llm action of the agent).
 *
 * @example
 * ```ts
 * import { History } from "@rolecraft/core"
 *
 * const budget: History.Budget = { maxTokens: 8_000 }
 * const summarised: History.Budget = { maxTokens: 8_000, strategy: History.summarize("summarize") }
 * ```
 *
 * @since 0.2.0
 */
import type * as Prompt from "./Prompt.ts"

/**
 * Drop the oldest whole exchanges until the history fits.
 *
 * @category models
 * @since 0.2.0
 */
export interface DropOldest {
  readonly _tag: "DropOldest"
}

/**
 * Fold the oldest exchanges into a summary written by `action`, an action of
 * the agent (typically an `Action.llm` marked `Action.excludeFromModel`)
 * taking `{ conversation: string }` and returning the summary as text. It
 * runs through the agent's pipeline like any call, and its tokens count in
 * the turn's usage. When the history exceeds the budget, the oldest
 * exchanges are folded until the rest fits in `keepTokens` (default half
 * the budget), so a summary is written once per half a budget of new
 * conversation, not on every turn. `conversation` holds the previous summary
 * (if any) and the folded exchanges as lines (`user: …`, `assistant: …`,
 * `assistant called book({"hotelId":"h-1"})`, `tool book: …`). The summary
 * is kept in the thread, sent as a second system message, and cut to a
 * quarter of the budget; if the history still does not fit, the oldest
 * exchanges are dropped as with {@link dropOldest}.
 *
 * @category models
 * @since 0.2.0
 */
export interface Summarize {
  readonly _tag: "Summarize"
  readonly action: string
  readonly keepTokens?: number | undefined
}

/**
 * How a history over its budget is brought within it.
 *
 * @category models
 * @since 0.2.0
 */
export type Strategy = DropOldest | Summarize

/**
 * A token budget for the history a turn sends the model: `maxTokens` (an
 * integer >= 1, estimated with {@link estimateTokens}) covers the system
 * messages, the summary, the history kept and the new input; `strategy`
 * defaults to {@link dropOldest}.
 *
 * @category models
 * @since 0.2.0
 */
export interface Budget {
  readonly maxTokens: number
  readonly strategy?: Strategy | undefined
}

/**
 * Drop the oldest whole exchanges (the default strategy).
 *
 * @category constructors
 * @since 0.2.0
 */
export const dropOldest: DropOldest = { _tag: "DropOldest" }

/**
 * Summarise the oldest exchanges with the agent's action named `action`
 * (see {@link Summarize}).
 *
 * @category constructors
 * @since 0.2.0
 */
export const summarize = (action: string, options?: { readonly keepTokens?: number | undefined }): Summarize => ({
  _tag: "Summarize",
  action,
  ...(options?.keepTokens === undefined ? {} : { keepTokens: options.keepTokens })
})

/** Tokens counted for each message besides its text: its role and framing. */
const perMessage = 4
const perTool = 8

const textLength = (message: Prompt.Message): number => {
  switch (message.role) {
    case "assistant": {
      let length = message.content.length
      for (const call of message.toolCalls ?? []) length += call.id.length + call.name.length + call.arguments.length
      return length
    }
    case "tool":
      return message.content.length + message.toolCallId.length
    default:
      return message.content.length
  }
}

/**
 * The estimated tokens of one message: ⌈characters / 4⌉ + 4, counting its
 * text and, for an assistant message, each tool call's id, name and
 * arguments (for a tool message, the id it answers).
 *
 * @category getters
 * @since 0.2.0
 */
export const estimateTokens = (message: Prompt.Message): number => Math.ceil(textLength(message) / 4) + perMessage

/**
 * The estimated tokens of the tool definitions a request sends (each tool's
 * name, description and JSON Schema parameters, as JSON): ⌈characters / 3⌉
 * + 8 per tool. JSON Schema is denser in tokens than prose, so its estimate
 * counts three characters a token, not four: it over-counts rather than
 * under-counts against the providers' tokenizers. A thread's budget counts
 * these with the system message and the new input as the fixed part of
 * every request of a turn.
 *
 * @category getters
 * @since 0.3.0
 */
export const estimateToolTokens = (
  tools: ReadonlyArray<{ readonly name: string; readonly description?: string; readonly parameters?: unknown }>
): number => {
  let total = 0
  for (const tool of tools) {
    const text = JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters })
    total += Math.ceil(text.length / 3) + perTool
  }
  return total
}

/**
 * The estimated tokens of a list of messages (the sum of
 * {@link estimateTokens}).
 *
 * @category getters
 * @since 0.2.0
 */
export const estimateAll = (messages: ReadonlyArray<Prompt.Message>): number => {
  let total = 0
  for (const message of messages) total += estimateTokens(message)
  return total
}

/**
 * Where the kept part of a history starts: the index of the first of
 * `sizes` (oldest first, each a whole exchange's tokens) that is kept when
 * `fixed` tokens are always sent and `maxTokens` is the budget. The oldest
 * are dropped until the rest fits; `sizes.length` when none fits.
 *
 * @category getters
 * @since 0.2.0
 */
export const firstKept = (sizes: ReadonlyArray<number>, fixed: number, maxTokens: number): number => {
  let total = fixed
  for (const size of sizes) total += size
  let first = 0
  while (first < sizes.length && total > maxTokens) {
    total -= sizes[first] as number
    first++
  }
  return first
}

/**
 * A message list cut into its leading system messages and its exchanges
 * (each starting at a user message; messages before the first user message
 * form an exchange of their own).
 *
 * @category getters
 * @since 0.2.0
 */
export const exchangesOf = (
  messages: ReadonlyArray<Prompt.Message>
): {
  readonly system: ReadonlyArray<Prompt.Message>
  readonly exchanges: ReadonlyArray<ReadonlyArray<Prompt.Message>>
} => {
  let start = 0
  while (start < messages.length && messages[start]?.role === "system") start++
  const exchanges: Array<Array<Prompt.Message>> = []
  for (let i = start; i < messages.length; i++) {
    const message = messages[i] as Prompt.Message
    const current = exchanges[exchanges.length - 1]
    if (current === undefined || message.role === "user") exchanges.push([message])
    else current.push(message)
  }
  return { system: messages.slice(0, start), exchanges }
}

/**
 * A history brought within `maxTokens` by dropping its oldest whole
 * exchanges: the leading system messages and the newest exchange always
 * stay (alone, when they exceed the budget by themselves). What the
 * {@link dropOldest} strategy does to a thread, for a message list you keep
 * yourself. A list that fits is returned as it is.
 *
 * @example
 * ```ts
 * import { History } from "@rolecraft/core"
 * import type { Prompt } from "@rolecraft/core"
 *
 * declare const conversation: ReadonlyArray<Prompt.Message>
 * const sent = History.trim(conversation, { maxTokens: 8_000 })
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const trim = (
  messages: ReadonlyArray<Prompt.Message>,
  budget: { readonly maxTokens: number }
): ReadonlyArray<Prompt.Message> => {
  const { system, exchanges } = exchangesOf(messages)
  if (exchanges.length <= 1) return messages
  const newest = exchanges[exchanges.length - 1] as ReadonlyArray<Prompt.Message>
  const older = exchanges.slice(0, -1)
  const first = firstKept(older.map(estimateAll), estimateAll(system) + estimateAll(newest), budget.maxTokens)
  return first === 0 ? messages : [...system, ...older.slice(first).flat(), ...newest]
}

/**
 * The system message a summary is sent as (after the turn's own system
 * message).
 *
 * @category constructors
 * @since 0.2.0
 */
export const summaryMessage = (summary: string): Prompt.SystemMessage => ({
  role: "system",
  content: `Summary of the earlier conversation:\n${summary}`
})

/**
 * The text a summarising action is given for `exchanges`: the previous
 * summary (if any), then one line per message — `user: …`, `assistant: …`,
 * `assistant called <tool>(<arguments>)` per tool call, `tool <tool>: …`.
 *
 * @category getters
 * @since 0.2.0
 */
export const transcript = (
  previous: string | undefined,
  exchanges: ReadonlyArray<ReadonlyArray<Prompt.Message>>
): string => {
  const lines: Array<string> = previous === undefined ? [] : [`Summary so far: ${previous}`]
  const names = new Map<string, string>()
  for (const exchange of exchanges) {
    for (const message of exchange) {
      switch (message.role) {
        case "assistant":
          if (message.content !== "") lines.push(`assistant: ${message.content}`)
          for (const call of message.toolCalls ?? []) {
            names.set(call.id, call.name)
            lines.push(`assistant called ${call.name}(${call.arguments})`)
          }
          break
        case "tool":
          lines.push(`tool ${names.get(message.toolCallId) ?? message.toolCallId}: ${message.content}`)
          break
        default:
          lines.push(`${message.role}: ${message.content}`)
      }
    }
  }
  return lines.join("\n")
}
