/**
 * What a language model answers, in each of its forms: the whole answer
 * (`Response`, with its `FinishReason` and `Citation`s) that
 * `LanguageModel`'s `generate` returns, the pieces of a streamed answer
 * (`StreamPart`s, `Finished` last), and what a provider gives
 * `LanguageModel.make` before it is normalised — a whole answer
 * (`ProviderResponse`) or the chunks of a streamed one (`ProviderChunk`,
 * with their `ToolCallFragment`s). Types only.
 *
 * @example
 * ```ts
 * import type { ModelResponse } from "@rolecraft/core"
 *
 * // a provider's answer as it may come off the wire: LanguageModel.make normalises it
 * const raw: ModelResponse.ProviderResponse = { text: null, toolCalls: [{ id: "call_1", name: "nights", arguments: "{}" }] }
 *
 * // what every caller of the model then reads
 * const summary = (response: ModelResponse.Response): string =>
 *   `${response.finishReason}: ${response.text} (${response.toolCalls.length} tool calls)`
 * ```
 *
 * @since 0.3.0
 */
import type * as ActionResponse from "./ActionResponse.ts"
import type { ToolCall } from "./Prompt.ts"

/**
 * A source the model cites: its `url` (a web page) and `title`, at least one
 * of them, and when the provider says them, an excerpt of its `content` (or
 * the text it cites) and the span of the reply's text that cites it
 * (`startIndex` to `endIndex`, in characters).
 *
 * @category models
 * @since 0.3.0
 */
export interface Citation {
  readonly url?: string | undefined
  readonly title?: string | undefined
  readonly content?: string | undefined
  readonly startIndex?: number | undefined
  readonly endIndex?: number | undefined
}

/**
 * Why the model stopped: it finished (`"stop"`), hit its token limit
 * (`"length"`, the reply is cut: its text, and any tool call it was writing),
 * called tools (`"tool_calls"`), had its reply filtered (`"content_filter"`),
 * or anything else a provider says (`"other"`).
 *
 * @category models
 * @since 0.3.0
 */
export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "other"

/**
 * The model's answer.
 *
 * - `text`: the reply's text, `""` when there is none.
 * - `toolCalls`: the tool calls, in the model's order (empty when none).
 * - `usage`: this call's tokens (0 for counts the provider did not report;
 *   `totalTokens` defaults to input + output).
 * - `finishReason`: see {@link FinishReason}.
 * - `model`: the model that answered, when the provider says.
 * - `refusal`: the model's refusal message, when it refused.
 * - `reasoning`: the model's reasoning before it answered, when the provider
 *   sends it (never part of `text`); `reasoningField` names the provider's
 *   field it came in (e.g. `reasoning_content`), so that a provider which
 *   needs it back gets it in that field.
 * - `citations`: the sources the provider says the answer cites, in order.
 * - `providerData`: what the provider attached to the reply and needs back
 *   on the next request (see {@link ProviderData}), when it did.
 *
 * @category models
 * @since 0.3.0
 */
export interface Response {
  readonly text: string
  readonly toolCalls: ReadonlyArray<ToolCall>
  readonly usage: ActionResponse.Usage
  readonly finishReason: FinishReason
  readonly model?: string | undefined
  readonly refusal?: string | undefined
  readonly reasoning?: string | undefined
  readonly reasoningField?: string | undefined
  readonly citations?: ReadonlyArray<Citation> | undefined
  readonly providerData?: ProviderData | undefined
}

/**
 * What a provider attached to a reply and needs sent back unchanged, keyed by
 * the provider's name (e.g. `anthropic`: its thinking blocks with their
 * signatures). It travels on the assistant message through threads, paused
 * and durable states as JSON, and only the provider of that name reads it:
 * another provider's request leaves it out.
 *
 * @category models
 * @since 0.3.0
 */
export type ProviderData = { readonly [provider: string]: unknown }

/**
 * Usage as a provider reports it (see `ActionResponse.Usage` for the
 * convention its counts must already follow: the three parts are parts of
 * input and output, never on top of them).
 *
 * @category models
 * @since 0.3.0
 */
export interface ProviderUsage {
  readonly inputTokens?: number | null | undefined
  readonly outputTokens?: number | null | undefined
  readonly totalTokens?: number | null | undefined
  readonly cachedInputTokens?: number | null | undefined
  readonly cacheWriteInputTokens?: number | null | undefined
  readonly reasoningTokens?: number | null | undefined
}

/**
 * What a provider answers; `LanguageModel.make` normalises it into a
 * {@link Response}. Missing or `null` text is `""`; missing tool calls are
 * none; usage counts that are missing or not finite non-negative numbers are
 * 0, and a missing total is input + output; a missing finish reason is
 * `"tool_calls"` when there are tool calls, else `"stop"`; a reason is read
 * without regard to case, the names providers give a reply cut at its token
 * limit (`max_tokens`, `MAX_TOKENS`, `max_output_tokens`, `model_length`,
 * `model_context_window_exceeded`) are `"length"`, and unknown reasons are
 * `"other"`. `reasoning` (with the field it came in, `reasoningField`) and
 * `citations` (a URL alone, or a {@link Citation}) are kept when given; an
 * empty reasoning is none. Usage parts (cached input, cache writes,
 * reasoning) are kept when they are counts, absent otherwise;
 * `providerData` (an object) is kept as given.
 *
 * @category models
 * @since 0.3.0
 */
export interface ProviderResponse {
  readonly text?: string | null | undefined
  readonly toolCalls?: ReadonlyArray<ToolCall> | undefined
  readonly usage?: ProviderUsage | null | undefined
  readonly finishReason?: string | null | undefined
  readonly model?: string | null | undefined
  readonly refusal?: string | null | undefined
  readonly reasoning?: string | null | undefined
  readonly reasoningField?: string | null | undefined
  readonly citations?: ReadonlyArray<Citation | string> | null | undefined
  readonly providerData?: ProviderData | null | undefined
}

/**
 * One piece of a streamed answer (see `LanguageModel`'s `stream`):
 *
 * - `TextDelta`: the next piece of the reply's text;
 * - `ReasoningDelta`: the next piece of the model's reasoning (never part
 *   of the text);
 * - `ToolCallArgumentsStarted`: the model began writing a tool call whose
 *   id and name are known (`index` is its position in the reply); its
 *   arguments follow;
 * - `ToolCallArgumentsDelta`: the next piece of that call's raw arguments
 *   (the pieces joined are `arguments`; the first one may carry what arrived
 *   before the call's name did);
 * - `Finished`: the whole answer, exactly as `generate` would return it —
 *   always the last part, exactly once.
 *
 * @category models
 * @since 0.3.0
 */
export type StreamPart =
  | { readonly _tag: "TextDelta"; readonly delta: string }
  | { readonly _tag: "ReasoningDelta"; readonly delta: string }
  | { readonly _tag: "ToolCallArgumentsStarted"; readonly index: number; readonly id: string; readonly name: string }
  | { readonly _tag: "ToolCallArgumentsDelta"; readonly index: number; readonly id: string; readonly delta: string }
  | { readonly _tag: "Finished"; readonly response: Response }

/**
 * One fragment of a tool call in a streamed chunk. `index`, when given, says
 * which call it belongs to (fragments with the same index and no other id
 * are one call); without it, the fragment belongs to the call with its `id`,
 * or starts one, or — with no id either — continues the last call. `id` and
 * `name` may come on any fragment (usually only the first; an empty one
 * never replaces a known one); `arguments` is the next piece of the raw
 * arguments string.
 *
 * @category models
 * @since 0.3.0
 */
export interface ToolCallFragment {
  readonly index?: number | null | undefined
  readonly id?: string | null | undefined
  readonly name?: string | null | undefined
  readonly arguments?: string | null | undefined
}

/**
 * One chunk of a streamed answer as a provider yields it: a piece of text,
 * of the refusal and of the reasoning (`reasoningField` names the
 * provider's field it came in), tool-call fragments, citations (a URL or a
 * `Citation`; one seen before is not repeated), and, on the chunks that
 * carry them, the finish reason, the usage, the model and the provider's data
 * to send back (`providerData`). Missing or `null` fields carry nothing. The
 * last finish reason, usage, model and provider data seen win.
 *
 * @category models
 * @since 0.3.0
 */
export interface ProviderChunk {
  readonly text?: string | null | undefined
  readonly refusal?: string | null | undefined
  readonly reasoning?: string | null | undefined
  readonly reasoningField?: string | null | undefined
  readonly toolCalls?: ReadonlyArray<ToolCallFragment> | null | undefined
  readonly citations?: ReadonlyArray<Citation | string> | null | undefined
  readonly finishReason?: string | null | undefined
  readonly usage?: ProviderResponse["usage"]
  readonly model?: string | null | undefined
  readonly providerData?: ProviderData | null | undefined
}
